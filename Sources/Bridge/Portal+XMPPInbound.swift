import Foundation
import IsthmusCommon
import IsthmusStore

extension Portal {
    /// A live MUC message. The component receives one copy per occupant it hosts: only the copy addressed to the
    /// bridge's own occupant is bridged; errors bounced to a puppet are failure reports for our own messages.
    func handleXMPPMessage(_ message: RoomMessage) async {
        if let error = message.error {
            if let to = message.to, to == context.naming.botOccupant || puppets.values.contains(where: { $0.occupant == to }) {
                await handleDeliveryError(message, error: error)
            }
            return
        }
        guard message.to == nil || message.to == context.naming.botOccupant else { return }
        await bridgeRoomMessage(message)
    }

    /// Bridges one groupchat message (live or archived) to Matrix exactly once, or takes it as our own echo.
    func bridgeRoomMessage(_ message: RoomMessage) async {
        let room = link.matrixRoom
        if isOurOccupant(nick: message.nick, occupantID: message.occupantID, realJID: message.realJID) {
            await takeReceipt(message)
            return
        }
        guard let body = message.body else { return }
        let key = message.stanzaID ?? StanzaID("noid:\(Digest.hex(Digest.sha256(Array("\(message.nick)\u{0}\(message.id ?? "")\u{0}\(body)".utf8)).prefix(12)))")!
        do {
            if let stanzaID = message.stanzaID, try await context.store.mapping(room: room, stanzaID: stanzaID) != nil {
                return
            }
        } catch {
            logger.error("Message map lookup failed", metadata: ["error": "\(error)"])
            return
        }
        let outgoing = MessageTranslation.toMatrix(body)
        let txnID = context.naming.matrixTxnID(room: link.muc, stanzaID: key)
        var backoff = Duration.seconds(1)
        while true {
            do {
                let ghost = try await ensureGhostOrThrow(nick: message.nick, occupantID: message.occupantID,
                                                         realJID: message.realJID, joinedNow: !message.fromArchive)
                let eventID = try await context.matrix.send(outgoing, as: ghost, in: room, txnID: txnID, timestamp: message.delay)
                try await context.store.recordBridgedFromXMPP(MessageMapping(
                    room: room, eventID: eventID, stanzaID: message.stanzaID, originID: message.originID,
                    direction: .xmppToMatrix, sender: message.realJID?.description ?? message.nick, state: .delivered))
                logger.debug("Bridged XMPP message", metadata: [
                    "xmpp.stanza.id": key.rawValue, "matrix.event.id": eventID.rawValue,
                ])
                return
            } catch MatrixLinkError.unavailable(let reason) {
                // The homeserver is down or overloaded: wait (this room's later events wait too, keeping order).
                logger.warning("Homeserver unavailable; retrying", metadata: ["xmpp.stanza.id": key.rawValue, "error": reason])
                do {
                    try await Task.sleep(for: backoff)
                } catch {
                    return   // shutting down: catch-up bridges it at the next start
                }
                backoff = min(backoff * 2, .seconds(30))
            } catch {
                await reportUndeliverable(message, key: key, error: error)
                return
            }
        }
    }

    /// Matrix refused a message for good: it is recorded as failed (so it is not retried) and its sender is told.
    private func reportUndeliverable(_ message: RoomMessage, key: StanzaID, error: any Error) async {
        let room = link.matrixRoom
        logger.error("Could not bridge an XMPP message to Matrix", metadata: ["xmpp.stanza.id": key.rawValue, "error": "\(error)"])
        if let stanzaID = message.stanzaID {
            _ = try? await context.store.insertMapping(MessageMapping(
                room: room, eventID: nil, stanzaID: stanzaID, originID: nil, direction: .xmppToMatrix,
                sender: message.nick, state: .failed))
            try? await context.store.setLastStanzaID(room, stanzaID)
        }
        if !message.fromArchive, botJoined, let occupantJID = link.muc.with(resource: message.nick) {
            try? await context.xmpp.sendPrivate(
                from: context.naming.botOccupant, to: occupantJID,
                body: "Your message could not be delivered to Matrix: \(MessageTranslation.describe(error))")
        }
    }

    /// Our own message came back from the MUC: its origin-id marks it delivered, with the room's stanza-id.
    func takeReceipt(_ message: RoomMessage) async {
        let room = link.matrixRoom
        do {
            if let originID = message.originID,
               try await context.store.markDeliveredIfOurs(room: room, originID: originID, stanzaID: message.stanzaID) {
                return
            } else if let stanzaID = message.stanzaID {
                try await context.store.setLastStanzaID(room, stanzaID)
            }
        } catch {
            logger.error("Could not record a receipt", metadata: ["error": "\(error)"])
        }
    }

    /// Whether a message or presence from `nick` is one of ours (the bridge's occupant or a puppet).
    func isOurOccupant(nick: String, occupantID: OccupantID?, realJID: JID?) -> Bool {
        if let realJID, context.naming.isOurs(realJID) { return true }
        if nick == botNick { return true }
        // Joined or not: after a restart puppets are rejoining, and archived reflections carry their nicks.
        return puppets.values.contains { $0.nick == nick }
    }

    /// The MUC bounced one of our messages. `not-acceptable` means the puppet is no longer an occupant: rejoin and
    /// resend once. Anything else: the Matrix sender is told in the room.
    func handleDeliveryError(_ message: RoomMessage, error: StanzaErrorInfo) async {
        let room = link.matrixRoom
        let originID = message.originID ?? message.id.flatMap(OriginID.init)
        guard let originID, let mapping = try? await context.store.mapping(room: room, originID: originID),
              mapping.direction == .matrixToXMPP, mapping.state == .sending, let user = UserID(mapping.sender) else { return }
        logger.warning("The MUC refused a bridged message", metadata: ["xmpp.origin.id": originID.rawValue, "xmpp.error": error.condition])
        if error.condition == "not-acceptable", let body = mapping.body, var puppet = puppets[user], puppet.joined {
            puppet.joined = false
            puppets[user] = puppet
            do {
                try await sendAsPuppet(user, body: body, originID: originID)
                return
            } catch {
                logger.warning("Resend after rejoin failed", metadata: ["error": "\(error)"])
            }
        }
        try? await context.store.markFailed(room: room, originID: originID)
        let name = displaynames[user] ?? user.localpart
        let reason = error.text.map { "\(error.condition): \($0)" } ?? error.condition
        await postNotice("⚠️ \(name)'s message could not be delivered to the XMPP room (\(reason)).",
                         subject: "failed:\(originID.rawValue)")
    }

    /// Posts a notice as the bridge bot in the Matrix room (best effort, idempotent per subject).
    func postNotice(_ text: String, subject: String) async {
        do {
            _ = try await context.matrix.send(OutgoingMatrixMessage(kind: .notice, body: text), as: context.matrix.botUserID,
                                              in: link.matrixRoom, txnID: context.naming.noticeTxnID(subject: subject),
                                              timestamp: nil)
        } catch {
            logger.error("Could not post a notice", metadata: ["error": "\(error)"])
        }
    }
}
