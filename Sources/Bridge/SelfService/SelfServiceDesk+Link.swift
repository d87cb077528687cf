import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// `!isthmus link MUC_JID OWNER_NICK`: the Matrix-side checks, then the consent handshake with the MUC owner
/// (``LinkConsent``) while the desk holds the MUC, then the link through ``LinkService``.
extension SelfServiceDesk {
    /// Handles a link request to its end (minutes: the owner's answer). Does I/O; runs on a child task of ``run()``.
    func link(_ room: RoomID, muc: JID, ownerNick: String, by sender: UserID, eventID: EventID,
              reply: @escaping @Sendable (String) async -> Void) async {
        guard settings.enabled else { return await reply("Self-service linking is turned off on this bridge; ask its administrator.") }
        let (authority, refusal) = await authorize(sender, in: room)
        guard let authority, refusal == nil else { return await reply(refusal ?? "Not allowed.") }
        if let refusal = await refusalBeforeAsking(room, muc: muc) { return await reply(refusal) }
        let request = LinkConsentMachine.Request(room: room, requester: sender, muc: muc, ownerNick: ownerNick,
                                                 requesterName: authority.displayname(of: sender), roomLabel: authority.label)
        guard pending.withLock({ pending in
            guard pending[room] == nil else { return false }
            pending[room] = Pending(muc: muc, ownerNick: ownerNick)
            return true
        }) else {
            return await reply("A link request for this room is waiting already; see !isthmus status.")
        }
        defer { pending.withLock { _ = $0.removeValue(forKey: room) } }
        let effects = LinkConsent.Effects(
            notice: { text in await self.notice(text, in: room, subject: "consent:\(eventID.rawValue):\(text)") },
            link: { request in await self.complete(request) })
        let consent = LinkConsent(
            machine: LinkConsentMachine(request: request, timeout: settings.consentTimeout, presenceGrace: settings.presenceGrace),
            xmpp: context.xmpp, naming: context.naming, clock: context.clock, effects: effects,
            logger: logger.with(["xmpp.muc": muc.description, "matrix.room.id": room.rawValue]))
        guard directory.reserve(muc, route: { consent.deliver($0) }) else {
            return await reply("Another link request for \(muc) is in progress, or it is linked already.")
        }
        logger.info("Asking a MUC owner to allow a link", metadata: ["matrix.room.id": room.rawValue, "xmpp.muc": muc.description])
        await consent.run()
        directory.release(muc)
        reloadLinks()
    }

    /// The checks made before bothering the MUC owner (``LinkService`` makes them again when linking).
    private func refusalBeforeAsking(_ room: RoomID, muc: JID) async -> String? {
        if let allowed = links.allowedMUCDomains, !allowed.contains(muc.domain) {
            return LinkRefusal.mucDomainNotAllowed(muc).description.capitalizedFirst + "."
        }
        let existing: [RoomLink]
        do {
            existing = try await links.links()
        } catch {
            return "The bridge could not read its links; try again later."
        }
        if let link = existing.first(where: { $0.matrixRoom == room }) {
            return "This room is already linked with \(link.muc); send !isthmus unlink first."
        }
        if existing.contains(where: { $0.muc == muc }) { return "\(muc) is already linked with another Matrix room." }
        return nil
    }

    /// The owner said yes: the requester's power is checked again (it may have changed meanwhile), then the link is
    /// recorded as `isthmus link` would. Nil when linked, else why not (for the Matrix room only: it may name ids).
    private func complete(_ request: LinkConsentMachine.Request) async -> String? {
        if await authorize(request.requester, in: request.room).refusal != nil {
            return "\(request.requesterName) may no longer manage this room's bridge"
        }
        do {
            _ = try await links.link(.id(request.room), muc: request.muc)
        } catch let refusal as LinkRefusal {
            return refusal.description
        } catch {
            return "\(error)"
        }
        try? await context.store.forgetInvitation(request.room)
        logger.info("Linked by a room command", metadata: ["matrix.room.id": request.room.rawValue, "xmpp.muc": request.muc.description])
        return nil
    }
}

private extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
