import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import MatrixCrypto

/// A ghost's Olm sessions with one peer device (by its Curve25519 identity key).
struct OlmPeer: Hashable, Sendable {
    var ghost: UserID
    var identityKey: Curve25519PublicKey
}

/// The ghosts' Olm sessions in memory: loaded once per peer from the store and then shared by the receiving side
/// and the sending side, so a session is never advanced in two copies (one message key used twice, the last save
/// undoing the other's ratchet step). What changed is saved by its user, pickled at the save.
extension GhostDevices {
    /// The sessions with `peer`, the most recently used first.
    func olmSessions(with peer: OlmPeer) async throws -> [OlmSession] {
        if let known = olmSessions[peer] { return known }
        let stored = try await store.olmSessions(of: peer.ghost, with: peer.identityKey.base64)
        // Loaded meanwhile by another caller (the actor ran it during the read): that copy is the one.
        if let known = olmSessions[peer] { return known }
        let sessions = stored.compactMap { try? OlmSession(pickle: $0.pickle, key: pickleKey) }
        olmSessions[peer] = sessions
        return sessions
    }

    /// Records `session` as the one most recently used with `peer` (the memory keeps as many as the store).
    func markUsed(_ session: OlmSession, with peer: OlmPeer) {
        var sessions = olmSessions[peer] ?? []
        sessions.removeAll { $0 === session }
        sessions.insert(session, at: 0)
        olmSessions[peer] = Array(sessions.prefix(Store.olmSessionsKept))
    }

    /// ``markUsed(_:with:)``, and `session` as it is to be stored now.
    func used(_ session: OlmSession, with peer: OlmPeer) -> StoredOlmSession {
        markUsed(session, with: peer)
        return StoredOlmSession(user: peer.ghost, senderKey: peer.identityKey.base64, sessionID: session.sessionID,
                                pickle: session.pickle(with: pickleKey), lastUsed: Int64(Date().timeIntervalSince1970 * 1000))
    }
}
