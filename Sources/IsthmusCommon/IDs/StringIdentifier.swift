/// An identifier that is a validated string: equality, hashing, printing and JSON coding all go through `rawValue`,
/// and decoding validates like `init?(_:)`. Adopted by every typed id so the boilerplate lives once.
public protocol StringIdentifier: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
    var rawValue: String { get }
}

extension StringIdentifier {
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "invalid \(Self.self) '\(text)'"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
