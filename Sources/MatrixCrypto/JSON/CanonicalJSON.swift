import Foundation

/// A JSON value that can be signed: what Matrix canonical JSON allows (no floats; integers within ±(2^53 − 1)).
/// `canonicalBytes` is its one canonical encoding (Matrix spec, Appendices, "Canonical JSON"): object keys sorted by
/// Unicode code point, no insignificant whitespace, UTF-8, strings escaped only where JSON requires it. Pure value.
public enum CanonicalJSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case string(String)
    case array([CanonicalJSON])
    case object([String: CanonicalJSON])

    /// The largest magnitude canonical JSON allows (the spec's `[-(2**53)+1, (2**53)-1]`).
    public static let maximumInteger: Int64 = (1 << 53) - 1

    /// Parses JSON text. A number written with a fraction or exponent is accepted when its value is an integer in
    /// range (the spec's `1e10` and `-0`); any other number, and invalid JSON, throws `notCanonicalJSON`.
    public init(parsing bytes: [UInt8]) throws {
        do {
            self = try JSONDecoder().decode(CanonicalJSON.self, from: Data(bytes))
        } catch let error as MatrixCryptoError {
            throw error
        } catch {
            throw MatrixCryptoError.notCanonicalJSON(reason: "invalid JSON")
        }
    }

    /// The member `key` when this is an object.
    public subscript(key: String) -> CanonicalJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The canonical encoding, the bytes that are signed.
    public var canonicalBytes: [UInt8] {
        var output = [UInt8]()
        write(to: &output)
        return output
    }

    /// The canonical encoding as a string.
    public var canonicalString: String { String(decoding: canonicalBytes, as: UTF8.self) }

    private func write(to output: inout [UInt8]) {
        switch self {
        case .null: output += Array("null".utf8)
        case .bool(let value): output += Array((value ? "true" : "false").utf8)
        case .integer(let value): output += Array(String(value).utf8)
        case .string(let value): Self.writeString(value, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            // Code-point order equals UTF-8 byte order; Swift's String `<` would compare normalized forms instead.
            let keys = members.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            for (index, key) in keys.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                members[key]!.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// A JSON string as the spec's grammar writes it (and Synapse's `canonicaljson` does): `"` and `\` escaped, the
    /// five short escapes `\b \f \n \r \t`, other control characters as `\u00xx` (lowercase hex), everything else as
    /// UTF-8.
    private static func writeString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x08: output += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: output += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0A: output += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: output += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: output += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

extension CanonicalJSON: Codable {
    /// Decodes any JSON value, refusing numbers canonical JSON cannot hold.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            guard abs(value) <= Self.maximumInteger else {
                throw MatrixCryptoError.notCanonicalJSON(reason: "integer out of range: \(value)")
            }
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            guard value.rounded() == value, abs(value) <= Double(Self.maximumInteger) else {
                throw MatrixCryptoError.notCanonicalJSON(reason: "not an integer in range: \(value)")
            }
            self = .integer(Int64(value))
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([CanonicalJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: CanonicalJSON].self))
        }
    }

    /// Encodes the value (in whatever key order the encoder uses; `canonicalBytes` is the canonical form).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
