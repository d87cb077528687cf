import IsthmusCommon
import XMPP

extension SelfPresence {
    /// The self-presence a room sends one of our occupants once its join as `nick` succeeded: status 110 (and 201
    /// when `created`), with `affiliation` in its item when given.
    public static func joined(room: JID, nick: String, created: Bool = false, affiliation: MUCAffiliation? = nil) -> SelfPresence {
        let occupant = room.bare.with(resource: nick)!
        let user = MUCUser(items: affiliation.map { [MUCItem(affiliation: $0, role: .participant)] } ?? [],
                           statusCodes: created ? [.selfPresence, .roomCreated] : [.selfPresence])
        return SelfPresence(presence: Presence(from: occupant, mucUser: user), occupantJID: occupant)
    }
}
