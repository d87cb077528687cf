import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The room itself, both ways (RICH.md §8, §9, §11): the MUC subject ↔ the Matrix topic, the MUC name → the Matrix
/// name (links made with `--sync-name`), the MUC's avatar → the Matrix room's, room upgrades (tombstones), the
/// bridge-info state (`m.bridge`) and the MUC's destruction. A sub-machine of ``PortalStateMachine``: it owns its
/// state, reads the room only through the ``Room`` view it is handed with each input, and its actions reach the
/// ``Portal`` wrapped in ``PortalStateMachine/Action/roomState(_:)``; its requests (``PortalChange``) ask the portal
/// machine to change its own state and are carried out by the router.
struct RoomStateMachine: Sendable {
    /// What happened, as far as the room's state goes.
    enum Input: Sendable, Equatable {
        /// A live or archived MUC message with a subject and no body (XEP-0045 §8.1).
        case subject(RoomMessage, text: String)
        /// The MUC bounced the subject change of ours that awaits its answer (see ``awaitsAnswer(to:)``).
        case subjectRefused(StanzaErrorInfo)
        /// The Matrix topic was set (nil) or why not.
        case topicSet(TopicChange, MatrixFailure?)
        /// A Matrix `m.room.topic` from the inbox.
        case matrixTopic(QueuedMatrixEvent, text: String)
        /// The puppet the subject change waited for is in the MUC.
        case puppetReady(SubjectChange)
        /// The puppet the subject change waited for could not be made ready.
        case puppetFailed(SubjectChange, XMPPFailure)
        /// A subject change went out (nil) or why not.
        case subjectSent(SubjectChange, XMPPFailure?)
        /// The room's disco#info arrived (the portal machine keeps it: its name is in ``Room/announcedName``).
        case featuresRead(RoomFeatures)
        /// The room's stored state arrived: the texts bridged last, and the avatar the bridge set.
        case loaded(RoomTexts, avatar: RoomAvatarRecord?)
        /// A presence from the room's bare JID, with what it says of the room's avatar (nil: nothing).
        case roomPresence(AvatarUpdate?)
        /// The bridge's occupant was told the MUC is destroyed (XEP-0045 §10.9).
        case destroyed(RoomDestruction)
        /// A Matrix `m.room.tombstone` from the inbox.
        case tombstone(QueuedMatrixEvent, replacement: RoomID)
        /// The bot joined the replacement room, whose `m.room.create` names `predecessor` (nil failure), or why not.
        case replacementJoined(RoomUpgrade, predecessor: RoomID?, MatrixFailure?)
        /// Whether the link moved to the replacement room (false: the store failed).
        case linkMoved(RoomUpgrade, moved: Bool)
        /// A change of the Matrix room's avatar ended.
        case avatarSet(RoomAvatarChange, RoomAvatarOutcome)
        /// The link has become active.
        case activated
        /// The link is being unlinked.
        case unlinked
    }

    /// What the portal must do, in order.
    enum Action: Sendable, Equatable {
        /// → ``Input/topicSet(_:_:)``: sets the Matrix room's topic as the change's actor (a ghost or the bot).
        case setMatrixTopic(TopicChange)
        /// The bot sets the Matrix room's name, then records it as the name bridged (a failure is logged, no outcome).
        case setMatrixRoomName(String)
        /// Records the subject/topic both sides now agree on.
        case recordSubject(String)
        /// Records that the MUC was destroyed, with the link's `error` status and its detail (one write).
        case recordDestruction(detail: String)
        /// → ``Input/subjectSent(_:_:)``: a subject change from one of our occupants (the room's reflection or its
        /// bounced error follows as an event).
        case sendSubject(SubjectChange, from: JID)
        /// A groupchat message from the bridge's own occupant (who changed the subject it set for a Matrix user); its
        /// reflection is ours, never bridged back. Best effort, no outcome.
        case announceInMUC(String, originID: OriginID)
        /// → ``Input/replacementJoined(_:predecessor:_:)``: the bot joins the room that replaces the upgraded one.
        case joinReplacementRoom(RoomUpgrade)
        /// → ``Input/linkMoved(_:moved:)``: the link and its state move to the replacement room (one commit).
        case moveLink(RoomUpgrade)
        /// After the move: `ghosts` and the bot leave the old room, and the bridge loads the link's portal for the new
        /// room (this portal is closed).
        case finishUpgrade(RoomUpgrade, ghosts: [UserID])
        /// → ``PortalEvent/roomAvatarSet(_:_:)``, queued: the MUC's avatar is fetched from its vCard (once per hash)
        /// and set as the Matrix room's avatar by the bot, or the bridge's avatar there is cleared.
        case setMatrixRoomAvatar(RoomAvatarChange)
        /// The bot sets or withdraws the room's bridge-info state (`m.bridge`); a refusal (no power) is logged, no outcome.
        case setBridgeInfo(BridgeInfoState)
        /// A notice from the bot in the Matrix room (idempotent per subject).
        case postNotice(String, subject: String)
        /// A handled inbox row is removed.
        case dequeue(seq: Int64)
        case log(LogEntry)

        /// Whether the machine waits for this action's outcome.
        var awaitsOutcome: Bool {
            switch self {
            case .setMatrixTopic, .sendSubject, .joinReplacementRoom, .moveLink: true
            default: false
            }
        }
    }

    /// What the machine returns, in order: actions for the ``Portal``, and changes of its own state the portal machine
    /// must make (they never reach the ``Portal``).
    typealias Output = SubMachineOutput<Action, PortalChange>

    /// What the portal machine must change of its own because of a room-state decision.
    enum PortalChange: Sendable, Equatable {
        /// The user's puppet must be in the MUC first; then ``Input/puppetReady(_:)`` or ``Input/puppetFailed(_:_:)``.
        case ensurePuppet(SubjectChange)
        /// The XMPP side was unavailable while an inbox row was handled: the drain stops and the row waits.
        case xmppUnavailable(XMPPFailure)
        /// The drain stops and the inbox is tried again later (the row waits).
        case retryInbox
        /// The MUC is gone: the portal's occupants are out of it, its work is dropped and it does not join again.
        case destroyed
        /// The link moved away: the portal closes.
        case close
    }

    /// What the machine may read of the room's model (kept by the portal machine), handed in with each input.
    struct Room {
        /// Whether an occupant with this nick is one of ours (the bridge's occupant or a puppet).
        var isOurOccupant: (_ nick: String) -> Bool
        /// The nick the bridge's own occupant holds.
        var botNick: String
        /// The ghost standing for the occupant with this nick, when it is joined to the Matrix room.
        var joinedGhost: (_ nick: String) -> UserID?
        /// The ghosts joined to the Matrix room, in a stable order.
        var joinedGhosts: () -> [UserID]
        /// The occupant JID of the user's puppet (joined or not).
        var puppetOccupant: (UserID) -> JID?
        /// What the user goes by in the MUC: their puppet's nick, else their Matrix name.
        var nameInMUC: (UserID) -> String
        /// What the user goes by in the Matrix room.
        var nameInMatrix: (UserID) -> String
        /// Whether the user is a Matrix user the bridge mirrors (not the bot, not a ghost).
        var isBridged: (UserID) -> Bool
        /// Whether the bridge's occupant is in the MUC.
        var botJoined: Bool
        /// The MUC's name as its disco#info last said (nil: not known).
        var announcedName: String?
        /// The MUC was destroyed (the portal machine keeps this: activation is gated on it).
        var destroyed: Bool
    }

    /// The link, as far as the room's state goes.
    struct Configuration: Sendable {
        var room: RoomID
        var muc: JID
        var naming: BridgeNaming
        var botUserID: UserID
        /// Whether the MUC's name is copied to the Matrix room (`link --sync-name`).
        var syncName = false
        /// Whether avatars are bridged.
        var avatars = false
    }

    /// A Matrix topic to set, and who sets it.
    struct TopicChange: Sendable, Equatable {
        var text: String
        /// The ghost of the occupant who changed the subject, or the bot (when the occupant has no ghost in the room,
        /// the room itself set it, or the ghost lacks the power).
        var actor: UserID
        /// The nick of the occupant who changed it (nil: the room, or a subject sent on join), named in a notice when
        /// the bot sets the topic.
        var setter: String?
    }

    /// A Matrix user's topic change on its way to the MUC as a subject change.
    struct SubjectChange: Sendable, Equatable {
        var text: String
        var user: UserID
        var eventID: EventID
        /// The stanza `id` the room's reflection or error will carry.
        var id: OriginID
        /// The inbox row, until it is handled; nil for the bridge's own retry.
        var seq: Int64?
        /// Whether the bridge's own occupant sends it (after the room refused the user's occupant).
        var byBridge = false
    }

    /// A tombstone being followed.
    struct RoomUpgrade: Sendable, Equatable {
        var replacement: RoomID
        /// Homeservers to join through: the tombstone sender's.
        var via: [String]
        /// The tombstone's inbox row and event.
        var seq: Int64
        var eventID: EventID
    }

    typealias LogEntry = PortalStateMachine.LogEntry
    typealias MatrixFailure = PortalStateMachine.MatrixFailure
    typealias XMPPFailure = PortalStateMachine.XMPPFailure

    let configuration: Configuration

    /// The subject/topic and name last bridged; nil until loaded at activation.
    var texts: RoomTexts?
    /// A subject change of ours the MUC has neither reflected nor refused yet.
    var pendingSubject: SubjectChange?
    /// The tombstone whose replacement room the bot may not join yet (it waits for an invitation; said once).
    var awaitingUpgradeInvite: EventID?
    /// The MUC's own avatar and the one the bridge set on the Matrix room.
    var avatar = RoomAvatarState()
    /// The room's bridge-info state was set during this portal's life.
    var bridgeInfoSet = false

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Takes one input; returns what to do, in order (at most the last action awaits an outcome).
    mutating func receive(_ input: Input, in room: Room) -> [Output] {
        switch input {
        case .subject(let message, let text): return subjectMessage(message, subject: text, in: room).map(Output.perform)
        case .subjectRefused(let error): return pendingSubject.map { subjectRefused($0, error: error, in: room) } ?? []
        case .topicSet(let change, let failure): return topicSet(change, failure: failure).map(Output.perform)
        case .matrixTopic(let queued, let text): return matrixTopic(queued, text: text, in: room)
        case .puppetReady(let change): return sendSubject(change, in: room)
        case .puppetFailed(let change, let failure): return subjectNotSent(change, failure, in: room)
        case .subjectSent(let change, let failure): return subjectSent(change, failure: failure, in: room)
        case .featuresRead(let features): return (syncRoomName(in: room) + avatarAnnounced(features.avatar)).map(Output.perform)
        case .loaded(let texts, let avatar):
            self.texts = texts
            return (syncRoomName(in: room) + avatarLoaded(avatar)).map(Output.perform)
        case .roomPresence(let update): return avatarAnnounced(update).map(Output.perform)
        case .destroyed(let destruction): return roomDestroyed(destruction, in: room)
        case .tombstone(let queued, let replacement): return roomUpgraded(queued, to: replacement, in: room).map(Output.perform)
        case .replacementJoined(let upgrade, let predecessor, let failure):
            return replacementJoined(upgrade, predecessor: predecessor, failure: failure)
        case .linkMoved(let upgrade, let moved): return linkMoved(upgrade, moved: moved, in: room)
        case .avatarSet(let change, let outcome): return avatarSet(change, outcome).map(Output.perform)
        case .activated: return publishBridgeInfo().map(Output.perform)
        case .unlinked: return [.perform(withdrawBridgeInfo)]
        }
    }

    /// Whether a bounced MUC message with this `id` answers the subject change of ours that awaits its answer.
    func awaitsAnswer(to id: StanzaAttributeID?) -> Bool {
        guard let pendingSubject, let id else { return false }
        return id.rawValue == pendingSubject.id.rawValue
    }
}
