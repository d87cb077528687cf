import IsthmusCommon

/// The room's presence about one of our own occupants (XEP-0045 §7.2.3: status 110, or from the occupant JID we asked
/// for): the nick the room gave us, our affiliation and role, and what the status codes say happened.
public struct SelfPresence: Sendable, Hashable {
    /// The presence as received.
    public var presence: Presence
    /// `room@service/nick` as the room has it (may differ from the requested nick after status 210).
    public var occupantJID: JID

    public init(presence: Presence, occupantJID: JID) {
        self.presence = presence
        self.occupantJID = occupantJID
    }

    /// The room's bare JID.
    public var room: JID { occupantJID.bare }
    /// Our nick in the room.
    public var nick: String { occupantJID.resource ?? "" }
    /// Status codes of the presence (110, 201, 210, 303, 307, 301, 321, 322, 332, 333, …).
    public var statusCodes: [MUCStatusCode] { presence.statusCodes }
    /// Our affiliation with the room.
    public var affiliation: MUCAffiliation? { presence.mucUser?.item?.affiliation }
    /// Our role in the room.
    public var role: MUCRole? { presence.mucUser?.item?.role }
    /// XEP-0421 id of this occupant in the room.
    public var occupantID: OccupantID? { presence.occupantID }
    /// 201: the join created the room.
    public var createdRoom: Bool { statusCodes.contains(.roomCreated) }
    /// 210: the service assigned a different nick than requested.
    public var nickAssignedByService: Bool { statusCodes.contains(.nickAssigned) }
}
