import IsthmusCommon

extension BridgeNaming {
    /// The start of the origin-id (and `id`) of every private message the bridge sends for a Matrix DM, so an error the
    /// room bounces for one is told apart from a groupchat message's.
    static let privateOriginIDPrefix = "isthmus-pm-"

    /// The origin-id for the private-message copy of a Matrix DM event: stable, so a resend carries the same one.
    func privateOriginID(for event: EventID) -> OriginID {
        OriginID(Self.privateOriginIDPrefix + Digest.hex(Digest.sha256(Array(event.rawValue.utf8)).prefix(16)))!
    }

    /// The Matrix txnId for bridging a private message from `identity` in `muc` into a DM room: stable across
    /// restarts for the same stanza `id` (a redelivered PM is sent once). Synapse scopes txnIds per sender (the ghost)
    /// and room.
    func privateTxnID(muc: JID, identity: String, stanzaID: String) -> ClientTransactionID {
        ClientTransactionID("isthmus.pm." + Digest.hex(Digest.sha256(Array("\(muc.bare)\u{0}\(identity)\u{0}\(stanzaID)".utf8)).prefix(16)))!
    }
}
