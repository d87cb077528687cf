import IsthmusCommon

/// Where messages enter and leave the bridge, in the metrics' terms: each message is counted once, at the point
/// where its delivery is recorded, with the kind and entry time noted when it entered (``InFlightMessages``).
///
/// - XMPP → Matrix enters when the XMPP task routes the stanza to its portal and is counted when its map entry is
///   written after the Matrix send succeeded (`Portal.recordPending`).
/// - Matrix → XMPP enters when its homeserver transaction is accepted (or, after a restart or a timeline catch-up,
///   when it is read from the inbox, without a latency) and is counted when the MUC's reflection marks it delivered
///   (`Portal.recordPending`).
///
/// A message whose entry is gone (the process restarted between its entry and its delivery, or the table was pruned)
/// still counts, as `text` and without a latency sample.
extension BridgeMetrics {
    /// The XMPP task saw `event` (before routing it): the connection gauges; a MUC message with a body — the copy
    /// addressed to the bridge's own occupant — enters.
    func observe(_ event: XMPPLinkEvent, botOccupant: JID, now: ContinuousClock.Instant) {
        switch event {
        case .connected(let reconnected):
            xmppLink(connected: true, reconnected: reconnected)
        case .disconnected:
            xmppLink(connected: false)
        case .message(let message):
            guard message.error == nil, message.to == nil || message.to == botOccupant, let body = message.body else { return }
            let key = message.stanzaID ?? PortalStateMachine.digestKey(message, body: body)
            inFlight.enter(.fromXMPP(muc: message.room.bare, key: key), kind: MessageKind(MessageTranslation.toMatrix(body).kind),
                           at: now, now: now)
        case .session(let change):
            xmppSession(change)
        case .presence, .privateMessage, .invite, .subscriptionRequest, .gateway:
            break
        }
    }

    /// The Matrix send of an XMPP message succeeded; its map entry comes next.
    func sentToMatrix(muc: JID, key: StanzaID, kind: MessageKind, room: RoomID, eventID: EventID?,
                      now: ContinuousClock.Instant) {
        let entered = inFlight.take(.fromXMPP(muc: muc.bare, key: key))?.enteredAt
        guard let eventID else { return }
        inFlight.enter(.sentToMatrix(room, eventID), kind: kind, at: entered, now: now)
    }

    /// An XMPP message's map entry was written after its successful send: delivered.
    func bridgedToMatrix(room: RoomID, eventID: EventID?, now: ContinuousClock.Instant) {
        let entry = eventID.flatMap { inFlight.take(.sentToMatrix(room, $0)) }
        delivered(.xmppToMatrix, kind: entry?.kind ?? .text, enteredAt: entry?.enteredAt, now: now)
    }

    /// The homeserver refused an XMPP message for good.
    func refusedByMatrix(muc: JID, key: StanzaID) {
        _ = inFlight.take(.fromXMPP(muc: muc.bare, key: key))
        failed(.xmppToMatrix, .homeserverRefused)
    }

    /// A MUC message of ours came back (a reflection): it is no XMPP → Matrix message in flight.
    func reflected(muc: JID, stanzaID: StanzaID?) {
        if let stanzaID { _ = inFlight.take(.fromXMPP(muc: muc.bare, key: stanzaID)) }
    }

    /// A Matrix message entered: from an accepted transaction (`at`: its acceptance) or read back from the inbox (nil).
    func enteredFromMatrix(room: RoomID, originID: OriginID, kind: MessageKind, at instant: ContinuousClock.Instant?,
                           now: ContinuousClock.Instant) {
        inFlight.enter(.fromMatrix(room, originID), kind: kind, at: instant, now: now)
    }

    /// The MUC reflected one of our messages not yet delivered: delivered.
    func deliveredToXMPP(room: RoomID, originID: OriginID, now: ContinuousClock.Instant) {
        let entry = inFlight.take(.fromMatrix(room, originID))
        delivered(.matrixToXMPP, kind: entry?.kind ?? .text, enteredAt: entry?.enteredAt, now: now)
    }

    /// One of our messages will never reach the MUC.
    func refusedByXMPP(room: RoomID, originID: OriginID) {
        _ = inFlight.take(.fromMatrix(room, originID))
        failed(.matrixToXMPP, .xmppRefused)
    }
}
