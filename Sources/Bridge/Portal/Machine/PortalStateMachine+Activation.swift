import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// Activation (first start, new link, reconnect, rejoin): the bot in both rooms, the room's stored state, the puppet
/// sync and the resends, in that order; the XMPP link going; the self-ping's verdict; unlink.
extension PortalStateMachine {
    /// Brings the link up: the bot joins the Matrix room, the bridge's occupant joins the MUC, the archive fills the
    /// gap since the last stanza-id, Matrix members' puppets (re)join, unreceipted messages are resent if the archive
    /// shows they never arrived, and then the inbox is drained — in that order.
    mutating func startActivation() -> [Action] {
        agenda.removeAll()
        drain = nil
        activating = true
        return [.bot(.joinMatrix)]
    }

    /// The XMPP link is up: the link activates (unless the MUC was destroyed).
    mutating func activate() -> [Action] {
        xmppConnected = true
        if destroyed { return [] }
        return startActivation()
    }

    /// The XMPP link went: nothing of ours is in the MUC any more; the link waits for the reconnect.
    mutating func xmppDisconnected() -> [Action] {
        xmppConnected = false
        botJoined = false
        activating = false
        let gone = puppets(.xmppGone)
        if destroyed { return gone }   // the link stays in error: there is nothing to wait for
        return gone + [.setStatus(.pending, detail: "waiting for the XMPP server")]
    }

    mutating func botJoinedMatrix(error: MatrixFailure?) -> [Action] {
        if let error {
            return [.log(LogEntry(level: .error, message: "Bot could not join the Matrix room", metadata: ["error": "\(error)"])),
                    .setStatus(.error, detail: "the bridge bot cannot join the Matrix room: \(error)")]
        }
        let cleared = ghosts(.occupantListCleared)
        agenda = [.joinBotOccupant(attempt: 0)]
        return cleared + roles(.occupantListCleared)
    }

    mutating func botJoinFailed(_ failure: XMPPFailure) -> [Action] {
        [.log(LogEntry(level: .error, message: "Could not join the MUC", metadata: ["error": "\(failure)"])),
         .setStatus(.error, detail: "cannot join the XMPP room: \(failure)")]
    }

    /// XEP-0410 §4: the bridge's occupant is not in the room under the nick the machine knows: it rejoins.
    mutating func selfPinged(_ outcome: SelfPingOutcome?) -> [Action] {
        switch outcome {
        case .notJoined?, .nickChanged?: break
        case .joined?, .inconclusive?, nil: return []
        }
        guard botJoined else { return [] }
        botJoined = false
        return [.log(LogEntry(level: .warning, message: "The bridge is no longer in the MUC; rejoining"))] + startActivation()
    }

    /// The bridge itself was invited into the MUC (a members-only room's owner let it in, or told it to come): when
    /// the MUC had refused it, or it is out for another reason and no step of an activation is under way, it tries
    /// again now instead of at the next reconnect. Otherwise the invitation changes nothing (whoever sent it: a
    /// XEP-0249 one names the room only by claim).
    mutating func botInvited(_ invite: RoomInvite) -> [Action] {
        guard xmppConnected, !botJoined, !destroyed, agenda.isEmpty else {
            return [.log(LogEntry(level: .debug, message: "An invitation into a MUC the bridge is in or joining ignored",
                                  metadata: ["xmpp.inviter": invite.inviter?.description ?? "-"]))]
        }
        return [.log(LogEntry(level: .info, message: "Invited into the MUC; joining again",
                              metadata: ["xmpp.inviter": invite.inviter?.description ?? "-"]))] + startActivation()
    }

    mutating func botJoinedMUC(_ join: BotJoin, _ result: JoinOutcome) -> [Action] {
        let attempt = join.attempt
        switch result {
        case .joined(let presence):
            botNick = presence.nick
            botJoined = true
            agenda = [.readRoomFeatures, .loadRoom]
            return [.log(LogEntry(level: .info, message: "Joined the MUC",
                                  metadata: ["xmpp.nick": presence.nick, "xmpp.muc.created": "\(presence.createdRoom)"]))]
                + roles(.botJoined(created: presence.createdRoom, affiliation: presence.affiliation))
        case .nickConflict:
            guard attempt + 1 < 10 else {
                return [.setStatus(.error, detail: "every nick tried for the bridge is taken in the XMPP room")]
            }
            agenda = [.joinBotOccupant(attempt: attempt + 1)]
            return []
        case .notAllowed(let error):
            return [.log(LogEntry(level: .error, message: "The MUC refused the bridge", metadata: ["xmpp.error": error.condition.rawValue])),
                    .setStatus(.error, detail: "the XMPP room refused the bridge: \(error.condition)\(error.text.map { " (\($0))" } ?? "")")]
        }
    }

    /// The room's persisted state arrived: puppets and ghosts are known again; the archive fills the gap.
    mutating func roomLoaded(_ snapshot: RoomSnapshot?) -> [Action] {
        agenda = [.syncPuppets, .loadUndelivered, .puppetsSynced, .finishActivation]
        guard let snapshot else { return [] }
        return puppets(.loaded(snapshot.puppets)) + ghosts(.loaded(snapshot.ghosts)) + roomState(.loaded(snapshot.texts, avatar: snapshot.avatar)) + catchUp(.roomLoaded(snapshot))
    }

    mutating func finishActivation() -> [Action] {
        activating = false
        inboxNeedsReload = true
        let checkFirst = catchUp(.timelineCheckDue)   // the first drain checks the timeline
        if resendsWentOut {
            inboxBlocked = false
            return checkFirst + ghosts(.activated) + roomState(.activated) + [.setStatus(.active, detail: nil)]
                + startDrainFromStore(selfCheck: false)
        }
        inboxBlocked = true
        return checkFirst + ghosts(.activated) + [.schedule(.inboxRetry, at: now + configuration.inboxRetryDelay)]
            + roomState(.activated) + [.setStatus(.active, detail: nil)]
    }

    /// The link goes: both rooms are left (see ``UnlinkPlan``) and the portal closes.
    mutating func unlink(connected: Bool) -> [Action] {
        xmppConnected = connected
        closed = true
        let leaving = connected ? puppets.values.filter(\.joined).sorted { $0.user.rawValue < $1.user.rawValue } : []
        let ghostsLeaving = ghosts.values.filter(\.joined).map(\.user).sorted { $0.rawValue < $1.rawValue }
        // Ghosts leave with no level of the bridge's left behind in the room's power levels.
        return roomState(.unlinked) + [.unlink(UnlinkPlan(ghosts: ghostsLeaving, puppets: leaving, botNick: connected && botJoined ? botNick : nil,
                                                       ghostLevels: GhostPowerLevels(wanted: [:])))]
    }
}
