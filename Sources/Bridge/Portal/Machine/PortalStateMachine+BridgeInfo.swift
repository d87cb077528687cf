import IsthmusCommon

/// The room's MSC2346 bridge-info state (`m.bridge`, `uk.half-shot.bridge`): set once the link is active, withdrawn
/// on unlink. Pure decisions; the ``Portal`` performs ``PortalStateMachine/Action/setBridgeInfo(_:)``.
extension PortalStateMachine {
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
}
