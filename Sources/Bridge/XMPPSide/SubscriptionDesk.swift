import IsthmusCommon
import IsthmusConfig
import IsthmusStore

/// Client mode: answers requests to see the account's presence (RFC 6121 §3.1.3) as `xmpp.client.accept_subscriptions`
/// says. Every request gets an answer, a refusal too (`unsubscribed`): one left pending, the server asks again at every
/// login. Runs on the XMPP task (requests are rare; one store read for `linked`).
struct SubscriptionDesk: Sendable {
    let policy: Config.SubscriptionPolicy

    /// Whether `requester`'s request is accepted: `linked` accepts the people the bridge knows by their real JID as an
    /// occupant of a linked room.
    func accepts(_ requester: JID, store: Store) async throws -> Bool {
        switch policy {
        case .none: false
        case .all: true
        case .linked: try await store.hasRoomGhost(realJID: requester)
        }
    }

    /// Decides and answers; a failure (the store, the link) is logged and the request left for the next login.
    func answer(_ requester: JID, context: BridgeContext) async {
        do {
            let accepted = try await accepts(requester, store: context.store)
            try await context.xmpp.answerSubscription(of: requester, accepted: accepted)
            context.logger.info("Answered a presence subscription request", metadata: [
                "xmpp.jid": requester.description, "xmpp.subscription.accepted": "\(accepted)"])
        } catch {
            context.logger.warning("Could not answer a presence subscription request", metadata: [
                "xmpp.jid": requester.description, "error": "\(error)"])
        }
    }
}
