import IsthmusCommon

/// What `GET /_matrix/app/v1/thirdparty/protocol/{protocol}` answers (appservice API §2.3.5, the `Protocol` object):
/// how clients ask for a location or user of the network. Pure value.
public struct ThirdPartyProtocol: Sendable, Equatable, Encodable {
    /// How a client shows and checks one field.
    public struct FieldType: Sendable, Equatable, Encodable {
        public var regexp: String
        public var placeholder: String
        public init(regexp: String, placeholder: String) {
            self.regexp = regexp
            self.placeholder = placeholder
        }
    }

    /// One network the protocol reaches.
    public struct Instance: Sendable, Equatable, Encodable {
        public var desc: String
        public var fields: [String: String]
        public var network_id: String
        public init(desc: String, fields: [String: String] = [:], networkID: String) {
            self.desc = desc
            self.fields = fields
            network_id = networkID
        }
    }

    public var user_fields: [String]
    public var location_fields: [String]
    public var icon: String
    public var field_types: [String: FieldType]
    public var instances: [Instance]

    public init(userFields: [String], locationFields: [String], icon: String = "", fieldTypes: [String: FieldType],
                instances: [Instance]) {
        user_fields = userFields
        location_fields = locationFields
        self.icon = icon
        field_types = fieldTypes
        self.instances = instances
    }
}

/// One answer of `GET /_matrix/app/v1/thirdparty/location…`: the Matrix alias of a place in the network. Pure value.
public struct ThirdPartyLocation: Sendable, Equatable, Encodable {
    public var alias: String
    public var `protocol`: String
    public var fields: [String: String]

    public init(alias: RoomAlias, protocol name: String, fields: [String: String]) {
        self.alias = alias.rawValue
        self.protocol = name
        self.fields = fields
    }
}
