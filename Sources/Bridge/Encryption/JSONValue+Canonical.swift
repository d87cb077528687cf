import Matrix
import MatrixCrypto

// The Matrix client's JSON and the canonical JSON that signatures cover are the same values without floats: key
// objects go from MatrixCrypto to the homeserver as the one, and what the homeserver answers is checked as the other.

extension JSONValue {
    /// A canonical JSON value as the Matrix client's JSON (the same value: canonical JSON has no floats).
    init(_ canonical: CanonicalJSON) {
        switch canonical {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .integer(let value): self = .integer(value)
        case .string(let value): self = .string(value)
        case .array(let values): self = .array(values.map(JSONValue.init))
        case .object(let members): self = .object(members.mapValues(JSONValue.init))
        }
    }
}

extension CanonicalJSON {
    /// A Matrix client JSON value as canonical JSON; nil when it holds a number canonical JSON refuses (a fraction).
    init?(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .integer(let number): self = .integer(number)
        case .double(let number):
            guard let exact = Int64(exactly: number) else { return nil }
            self = .integer(exact)
        case .string(let text): self = .string(text)
        case .array(let values):
            var converted: [CanonicalJSON] = []
            for value in values {
                guard let item = CanonicalJSON(value) else { return nil }
                converted.append(item)
            }
            self = .array(converted)
        case .object(let members):
            var converted: [String: CanonicalJSON] = [:]
            for (key, value) in members {
                guard let item = CanonicalJSON(value) else { return nil }
                converted[key] = item
            }
            self = .object(converted)
        }
    }
}
