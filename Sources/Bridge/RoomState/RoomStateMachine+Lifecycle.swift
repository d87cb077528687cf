import IsthmusCommon

/// The link's life as the Matrix room shows it: the MSC2346 bridge-info state (`m.bridge`, `uk.half-shot.bridge`),
/// set once the link is active and withdrawn on unlink, and the MUC's destruction (XEP-0045 §10.9).
extension RoomStateMachine {
    /// The state key: unique per bridge protocol and MUC (`xmpp://<muc-jid>`).
    var bridgeInfoStateKey: String { "xmpp://\(configuration.muc.description)" }

    /// The bridge-info content for this link: the bot, the XMPP protocol, the MUC service as network, the MUC as channel.
    var bridgeInfo: BridgeInfoContent {
        let muc = configuration.muc
        return BridgeInfoContent(
            bridgebot: configuration.botUserID,
            protocol: .init(id: "xmpp", displayname: "XMPP"),
            network: .init(id: muc.domain, displayname: muc.domain),
            channel: .init(id: muc.description, displayname: muc.localpart ?? muc.description))
    }

    /// The bridge-info state to set when the link has become active: once per portal (a reconnect does not repeat it).
    mutating func publishBridgeInfo() -> [Action] {
        guard !bridgeInfoSet else { return [] }
        bridgeInfoSet = true
        return [.setBridgeInfo(BridgeInfoState(stateKey: bridgeInfoStateKey, content: bridgeInfo))]
    }

    /// The bridge-info state withdrawn (set to `{}`) at unlink, whether or not this portal set it.
    var withdrawBridgeInfo: Action {
        .setBridgeInfo(BridgeInfoState(stateKey: bridgeInfoStateKey, content: nil))
    }

    /// The MUC was destroyed: the link goes to `error` with the reason, the Matrix room is told — naming the alternate
    /// venue as an `xmpp:` URI, the address its people need — and the bridge stays out of the MUC (joining again would
    /// create a new room under the same address), also after a restart (recorded with the link).
    func roomDestroyed(_ destruction: RoomDestruction, in room: Room) -> [Output] {
        guard !room.destroyed else { return [] }
        var detail = "the XMPP room was destroyed"
        var notice = "⚠️ The XMPP room was destroyed"
        if let reason = destruction.reason {
            detail += ": \(reason)"
            notice += " (reason: \(reason))"
        }
        notice += ". This room is no longer bridged."
        if let venue = destruction.alternateVenue {
            detail += "; alternate venue xmpp:\(venue.bare)?join"
            notice += " The conversation continues at xmpp:\(venue.bare)?join"
        }
        return [.portal(.destroyed)] + [
            .log(LogEntry(level: .notice, message: "The MUC was destroyed",
                          metadata: ["xmpp.alternate_venue": destruction.alternateVenue?.description ?? "-"])),
            .recordDestruction(detail: detail),
            .postNotice(notice, subject: "destroyed:\(configuration.muc.bare)"),
        ].map(Output.perform)
    }
}
