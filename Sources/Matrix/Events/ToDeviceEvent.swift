import IsthmusCommon

/// A to-device message the homeserver pushes to the appservice for one of its users' devices (MSC4203, first part
/// of MSC2409: `de.sorunome.msc2409.to_device` in a transaction; Synapse with
/// `experimental_features.msc2409_to_device_messages_enabled`). Each names its recipient user and device. Pure value.
public struct ToDeviceEvent: Sendable, Equatable, Codable {
    public var type: String
    public var sender: UserID
    public var recipient: UserID
    public var recipientDevice: DeviceID
    public var content: JSONValue

    public init(type: String, sender: UserID, recipient: UserID, recipientDevice: DeviceID, content: JSONValue) {
        self.type = type
        self.sender = sender
        self.recipient = recipient
        self.recipientDevice = recipientDevice
        self.content = content
    }

    enum CodingKeys: String, CodingKey {
        case type, sender, content
        case recipient = "to_user_id"
        case recipientDevice = "to_device_id"
    }
}

/// What the homeserver says of one of the appservice's users' devices' keys (MSC3202): how many one-time keys it still
/// holds for it, and whether its fallback key is unused. Pure value.
public struct DeviceKeyCount: Sendable, Equatable {
    public var user: UserID
    public var device: DeviceID
    /// Unclaimed `signed_curve25519` one-time keys, when reported.
    public var oneTimeKeys: Int?
    /// Whether a `signed_curve25519` fallback key is unused, when reported.
    public var unusedFallbackKey: Bool?

    public init(user: UserID, device: DeviceID, oneTimeKeys: Int?, unusedFallbackKey: Bool?) {
        self.user = user
        self.device = device
        self.oneTimeKeys = oneTimeKeys
        self.unusedFallbackKey = unusedFallbackKey
    }
}
