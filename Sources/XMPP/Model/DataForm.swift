import XMLStream

/// A XEP-0004 data form (`<x xmlns='jabber:x:data' type='…'>`): enough for MAM filters, room configuration and
/// disco extensions.
public struct DataForm: Sendable, Hashable {
    /// `<field var type><value/>…</field>`.
    public struct Field: Sendable, Hashable {
        /// The field's `var`.
        public var name: String?
        /// The field's `type` (e.g. `hidden`).
        public var type: String?
        /// The `<value>`s in order.
        public var values: [String]
        /// A field named `name` with `values`.
        public init(_ name: String?, type: String? = nil, values: [String]) {
            self.name = name
            self.type = type
            self.values = values
        }
    }

    /// `form`, `submit`, `cancel` or `result`.
    public var type: String
    /// Fields in order.
    public var fields: [Field]

    public init(type: String, fields: [Field] = []) {
        self.type = type
        self.fields = fields
    }

    /// The hidden `FORM_TYPE` field's value (XEP-0068), if any.
    public var formType: String? { self["FORM_TYPE"]?.first }

    /// The values of the field `name`.
    public subscript(name: String) -> [String]? { fields.first { $0.name == name }?.values }

    /// Reads the element; throws when it is not this one or lacks what the spec requires.
    public init(element: XElement) throws(StanzaParseError) {
        try element.expect("x", XMPPNamespace.dataForms)
        type = try element.required("type")
        fields = element.children("field", namespace: XMPPNamespace.dataForms).map { field in
            Field(field[attribute: "var"], type: field[attribute: "type"],
                  values: field.children("value", namespace: XMPPNamespace.dataForms).map(\.text))
        }
    }

    /// The element, ready to serialize.
    public var element: XElement {
        var x = XElement("x", namespace: XMPPNamespace.dataForms, ["type": type])
        for field in fields {
            x.append(XElement("field", namespace: XMPPNamespace.dataForms, ["var": field.name, "type": field.type],
                              children: field.values.map { .element(XElement("value", namespace: XMPPNamespace.dataForms, children: [.text($0)])) }))
        }
        return x
    }
}
