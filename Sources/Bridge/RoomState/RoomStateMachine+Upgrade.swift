import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// Matrix room upgrades (`m.room.tombstone`, spec §11.32; RICH.md §11): the bot joins the replacement room through the
/// tombstone sender's homeserver (waiting for an invitation where the new room is invite-only), checks that the new
/// room names this one as its predecessor, and the link moves there in one commit. This portal then closes; the bridge
/// loads the link's portal for the new room, whose activation brings the ghosts of present occupants into it, catches
/// up the MUC from the resume point and reads the new room's timeline — so nothing said on either side during the move
/// is lost, and the message map (moved with the link) keeps anything from being bridged twice. What the old room says
/// after its tombstone is not bridged.
extension RoomStateMachine {
    /// A tombstone in the linked room (from anyone but the bridge: only a user with the power for it can send one).
    func roomUpgraded(_ queued: QueuedMatrixEvent, to replacement: RoomID, in room: Room) -> [Action] {
        let event = queued.event
        guard room.isBridged(event.sender), replacement != configuration.room else { return [.dequeue(seq: queued.seq)] }
        return [.log(LogEntry(level: .notice, message: "The Matrix room was upgraded; following it",
                              metadata: ["matrix.room.replacement": replacement.rawValue])),
                .joinReplacementRoom(RoomUpgrade(replacement: replacement, via: [event.sender.server], seq: queued.seq,
                                                 eventID: event.eventID))]
    }

    /// The bot is in the replacement room (or could not join it). A room that does not name this one as its
    /// predecessor is not followed: anyone with the power to send a tombstone could otherwise point the MUC at any room.
    mutating func replacementJoined(_ upgrade: RoomUpgrade, predecessor: RoomID?, failure: MatrixFailure?) -> [Output] {
        switch failure {
        case .unavailable(let reason)?:
            return [.perform(.log(LogEntry(level: .warning, message: "Could not join the replacement room; trying again later",
                                           metadata: ["error": reason]))),
                    .portal(.retryInbox)]
        case .refused(let reason)?:
            // An invite-only replacement: the bridge waits for an invitation (Synapse does not invite anyone into the
            // new room; clients offer to), trying the join again with the inbox's retries. The old room's later
            // events wait behind the tombstone and are dropped once the link moves.
            let first = awaitingUpgradeInvite != upgrade.eventID
            awaitingUpgradeInvite = upgrade.eventID
            return [Action.log(LogEntry(level: first ? .warning : .debug, message: "The bridge could not join the replacement room; waiting for an invitation",
                                        metadata: ["matrix.room.replacement": upgrade.replacement.rawValue, "error": reason])),
                    .postNotice("⚠️ This room was upgraded. Invite the bridge to the new room to keep it linked with the XMPP room (joining it was refused: \(reason)).",
                                subject: "upgrade-refused:\(upgrade.eventID.rawValue)")].map(Output.perform)
                + [.portal(.retryInbox)]
        case nil:
            guard predecessor == configuration.room else {
                return [Action.log(LogEntry(level: .warning, message: "A tombstone names a room that does not replace this one; not followed",
                                            metadata: ["matrix.room.replacement": upgrade.replacement.rawValue,
                                                       "matrix.room.predecessor": predecessor?.rawValue ?? "-"])),
                        .dequeue(seq: upgrade.seq)].map(Output.perform)
            }
            return [.perform(.moveLink(upgrade))]
        }
    }

    /// The link now belongs to the replacement room: this portal's ghosts and bot leave the old room and it closes.
    func linkMoved(_ upgrade: RoomUpgrade, moved: Bool, in room: Room) -> [Output] {
        guard moved else { return [.portal(.retryInbox)] }
        return [.portal(.close),
                .perform(.log(LogEntry(level: .notice, message: "The link moved to the replacement room",
                                       metadata: ["matrix.room.replacement": upgrade.replacement.rawValue]))),
                .perform(.finishUpgrade(upgrade, ghosts: room.joinedGhosts()))]
    }
}
