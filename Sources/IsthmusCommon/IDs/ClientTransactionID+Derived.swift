extension ClientTransactionID {
    /// A send transaction id derived from a stable source key (e.g. the room's XMPP stanza-id plus the room), so a
    /// resend after a crash reuses it and the homeserver answers with the original event (client-server API §9.4.3
    /// "Transaction identifiers"). Pure.
    ///
    /// Synapse remembers an appservice's txnIds per appservice and room — not per ghost (PROTOCOL.md) — so keys must
    /// be unique across all ghosts of a room: include everything that distinguishes the source message.
    /// Form: `isthmus.` + the first 32 hex digits of SHA-256(key).
    public static func derived(fromSourceKey key: String) -> ClientTransactionID {
        ClientTransactionID("isthmus." + Digest.hex(Digest.sha256(Array(key.utf8))).prefix(32))!
    }
}
