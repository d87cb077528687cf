import Foundation
import Matrix

/// Reading raw Matrix JSON in tests: `event.at("content", "m.relates_to", "event_id")?.stringValue`.
extension JSONValue {
    /// Converts what `JSONSerialization` produced (a dictionary, array or scalar).
    public init(jsonObject: Any) throws {
        let data = try JSONSerialization.data(withJSONObject: jsonObject, options: [.fragmentsAllowed])
        self = try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// The value at a path of object members; nil when any step is missing or not an object.
    public func at(_ path: String...) -> JSONValue? {
        var value: JSONValue? = self
        for key in path { value = value?[key] }
        return value
    }

    /// The members when this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The elements when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The JSON text (sorted keys), for failure messages.
    public var jsonText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
    }
}
