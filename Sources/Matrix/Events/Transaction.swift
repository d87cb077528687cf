import IsthmusCommon

/// One appservice transaction: the events the homeserver pushes with `PUT /_matrix/app/v1/transactions/{txnId}`
/// (appservice API "Pushing events"). Pure value.
///
/// Events are in the order the homeserver sent them. An event whose envelope cannot be read (no valid id,
/// room or sender) is left out of ``events`` and kept in ``rejectedEvents``; the rest of the transaction is unaffected.
public struct Transaction: Sendable, Equatable {
    public var id: TransactionID
    public var events: [ClientEvent]
    /// Typing and receipts (`ephemeral`, or the unstable `de.sorunome.msc2409.ephemeral`).
    public var ephemeral: [EphemeralEvent]
    /// To-device messages for the appservice's users' devices (`de.sorunome.msc2409.to_device`): not persisted by
    /// the homeserver, so never sent again — what they carry must be kept before the transaction is acknowledged.
    public var toDevice: [ToDeviceEvent]
    /// Users whose device lists changed (MSC3202), for the encrypting side to read their devices again.
    public var deviceListsChanged: [UserID]
    /// The appservice's devices' key counts (MSC3202), for the encrypting side to top up their keys.
    public var keyCounts: [DeviceKeyCount]
    /// Entries of `events` that could not be decoded at all.
    public var rejectedEvents: [RejectedEvent]

    public init(id: TransactionID, events: [ClientEvent], ephemeral: [EphemeralEvent] = [], toDevice: [ToDeviceEvent] = [],
                deviceListsChanged: [UserID] = [], keyCounts: [DeviceKeyCount] = [], rejectedEvents: [RejectedEvent] = []) {
        self.keyCounts = keyCounts
        self.toDevice = toDevice
        self.deviceListsChanged = deviceListsChanged
        self.id = id
        self.events = events
        self.ephemeral = ephemeral
        self.rejectedEvents = rejectedEvents
    }
}

/// An entry of a transaction that could not be decoded: its raw JSON (when it was JSON at all) and why. Pure value.
public struct RejectedEvent: Sendable, Equatable {
    /// Index in the transaction's `events`, `ephemeral` or to-device list.
    public var index: Int
    public var raw: JSONValue
    public var reason: String
}
