import IsthmusCommon

/// The consent handshake of a self-service link, as a value: no I/O, no clock (time is passed in). The bridge's own
/// occupant joins the MUC, checks that the named owner is present as `owner` or `admin`, asks that occupant in private,
/// and links only on a private `yes` from the same occupant before the deadline. Whatever else happens, nothing is
/// linked and the requester is told why. ``LinkConsent`` (the actor that owns one request) performs the actions and
/// feeds their outcomes back.
///
/// "The same occupant": the same occupant-id (XEP-0421) when both the presence and the answer carry one, else the
/// same real JID when the room shows it, else the same nick — and the asked occupant must stay in the room under
/// that nick the whole time (a leave or a nick change refuses), so nobody else can hold the nick meanwhile
/// (XEP-0045 §7.2.9: a room gives a nick to one occupant at a time).
public struct LinkConsentMachine: Sendable {
    /// What was asked in Matrix, with the names shown to the MUC owner (no Matrix ids: a displayname and the room's
    /// name or public alias).
    public struct Request: Sendable, Equatable {
        public var room: RoomID
        public var requester: UserID
        public var muc: JID
        public var ownerNick: String
        /// The requester as the MUC owner reads it: their displayname in the room (else their localpart).
        public var requesterName: String
        /// The Matrix room as the MUC owner reads it: its name and/or public alias.
        public var roomLabel: String

        public init(room: RoomID, requester: UserID, muc: JID, ownerNick: String, requesterName: String, roomLabel: String) {
            self.room = room
            self.requester = requester
            self.muc = muc
            self.ownerNick = ownerNick
            self.requesterName = requesterName
            self.roomLabel = roomLabel
        }
    }

    /// A MUC occupant as its presence shows it (XEP-0045 §7.2.3, `muc#user` `item`).
    public struct Occupant: Sendable, Equatable {
        public var nick: String
        public var affiliation: MUCAffiliation?
        public var occupantID: OccupantID?
        public var realJID: JID?

        public init(nick: String, affiliation: MUCAffiliation?, occupantID: OccupantID? = nil, realJID: JID? = nil) {
            self.nick = nick
            self.affiliation = affiliation
            self.occupantID = occupantID
            self.realJID = realJID
        }

        /// Whether `other` is the same occupant: by occupant-id when both have one, else by real JID, else by nick.
        func isSame(as other: Occupant) -> Bool {
            if let mine = occupantID, let theirs = other.occupantID { return mine == theirs }
            if let mine = realJID, let theirs = other.realJID { return mine.bare == theirs.bare }
            return nick == other.nick
        }
    }

    public enum Action: Sendable, Equatable {
        /// → ``joined(now:)`` or ``joinFailed(_:)``: the bridge's occupant joins the MUC.
        case joinMUC(JID)
        /// A private message from the bridge's occupant to `nick` in the MUC.
        case sendPrivate(nick: String, body: String)
        /// A groupchat message from the bridge's occupant in the MUC.
        case sendGroupchat(String)
        /// Call ``timeElapsed(now:)`` at this time.
        case scheduleTimeout(at: ContinuousClock.Instant)
        /// The bridge's occupant leaves the MUC (the portal joins it again once the link is loaded).
        case leaveMUC(JID)
        /// → ``linked(error:)``: check the requester's power again and record the link (as `isthmus link` would).
        case link(Request)
        /// An `m.notice` from the bot in the Matrix room.
        case noticeMatrix(String)
    }

    enum State: Sendable, Equatable {
        case idle
        /// Joining; occupants' presences arrive before our self-presence (XEP-0045 §7.2.3).
        case joining
        /// Joined, but the named nick's presence has not been seen yet: it may still be on its way to us.
        case lookingForOwner(until: ContinuousClock.Instant)
        case awaitingAnswer(owner: Occupant, deadline: ContinuousClock.Instant)
        case linking(owner: Occupant)
        case finished
    }

    public let request: Request
    let timeout: Duration
    /// How long after our join the named owner's presence may still arrive.
    let presenceGrace: Duration
    private(set) var state = State.idle
    /// The occupants seen so far (by nick), from their presences.
    private var occupants: [String: Occupant] = [:]

    public init(request: Request, timeout: Duration, presenceGrace: Duration = .seconds(2)) {
        self.request = request
        self.timeout = timeout
        self.presenceGrace = presenceGrace
    }

    /// Whether the handshake is over (linked or refused).
    public var isFinished: Bool { state == .finished }

    /// The nick asked, while an answer is awaited.
    public var askedNick: String? {
        if case .awaitingAnswer(let owner, _) = state { owner.nick } else { nil }
    }

    public mutating func start() -> [Action] {
        guard state == .idle else { return [] }
        state = .joining
        return [.joinMUC(request.muc)]
    }

    /// An occupant's presence in the MUC (not our own): available with its affiliation, or gone.
    /// `newNick`: set when it left under this nick to come back under another (status 303).
    public mutating func presence(_ occupant: Occupant, available: Bool, newNick: String? = nil,
                                  now: ContinuousClock.Instant) -> [Action] {
        if available { occupants[occupant.nick] = occupant } else { occupants[occupant.nick] = nil }
        switch state {
        case .lookingForOwner:
            return available && occupant.nick == request.ownerNick ? checkOwner(occupant, now: now) : []
        case .awaitingAnswer(let owner, _) where !available && occupant.nick == owner.nick:
            let why = newNick == nil ? "left \(request.muc) before answering" : "changed nick before answering"
            return refuse("\(owner.nick) \(why)")
        case .awaitingAnswer(let owner, _) where occupant.nick == owner.nick && occupant.affiliation != nil
            && occupant.affiliation != .owner && occupant.affiliation != .admin:
            return refuse("\(owner.nick) is no longer an owner or admin of \(request.muc)")
        default:
            return []
        }
    }

    /// The bridge's occupant is in the MUC.
    public mutating func joined(now: ContinuousClock.Instant) -> [Action] {
        guard state == .joining else { return [] }
        if let owner = occupants[request.ownerNick] { return checkOwner(owner, now: now) }
        let until = now + presenceGrace
        state = .lookingForOwner(until: until)
        return [.scheduleTimeout(at: until)]
    }

    private mutating func checkOwner(_ owner: Occupant, now: ContinuousClock.Instant) -> [Action] {
        guard owner.affiliation == .owner || owner.affiliation == .admin else {
            return refuse("\(request.ownerNick) is not an owner or admin of \(request.muc)")
        }
        let deadline = now + timeout
        state = .awaitingAnswer(owner: owner, deadline: deadline)
        return [
            .sendPrivate(nick: owner.nick, body: "\(request.requesterName), a moderator of the Matrix room \(request.roomLabel), "
                + "asks to bridge this room (\(request.muc)) with it. Reply yes within \(Self.describe(timeout)) to allow; "
                + "any other reply refuses."),
            .scheduleTimeout(at: deadline),
            .noticeMatrix("Asked \(owner.nick) in \(request.muc) to allow the link; waiting up to \(Self.describe(timeout))."),
        ]
    }

    /// The MUC could not be joined.
    public mutating func joinFailed(_ reason: String) -> [Action] {
        guard state == .joining else { return [] }
        state = .finished
        return [.noticeMatrix("Not linked: the bridge cannot join \(request.muc): \(reason).")]
    }

    /// A private message to the bridge's occupant in the MUC. Only the asked occupant's answer counts.
    public mutating func privateMessage(from sender: Occupant, body: String, now: ContinuousClock.Instant) -> [Action] {
        guard case .awaitingAnswer(let owner, let deadline) = state, sender.nick == owner.nick, sender.isSame(as: owner) else {
            return []
        }
        if now >= deadline { return timeElapsed(now: now) }
        let answer = body.lowercased().filter { !$0.isWhitespace && $0 != "." && $0 != "!" }
        guard answer == "yes" || answer == "y" else {
            return refuse("\(owner.nick) did not allow it", tellingOwner: "Understood: this room is not bridged.")
        }
        state = .linking(owner: owner)
        return [.link(request)]
    }

    /// A scheduled time came: the answer's deadline, or the end of the wait for the owner's presence.
    public mutating func timeElapsed(now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .lookingForOwner(let until) where now >= until:
            return refuse("\(request.ownerNick) is not in \(request.muc)")
        case .awaitingAnswer(let owner, let deadline) where now >= deadline:
            return refuse("\(owner.nick) did not answer within \(Self.describe(timeout))",
                          tellingOwner: "The request to bridge this room with \(request.roomLabel) expired.")
        default:
            return []
        }
    }

    /// The room bounced a private message to `nick` (e.g. a service that forbids private messages, XEP-0045 §7.5).
    /// While asking, the question did not arrive: refused, saying why.
    public mutating func privateMessageBounced(to nick: String, reason: String) -> [Action] {
        guard case .awaitingAnswer(let owner, _) = state, nick == owner.nick else { return [] }
        return refuse("the MUC did not pass the question on to \(owner.nick) (\(reason))")
    }

    /// The XMPP connection dropped: the bridge's occupant is gone from the MUC, so no answer can reach it.
    public mutating func connectionLost() -> [Action] {
        switch state {
        case .joining, .lookingForOwner, .awaitingAnswer:
            state = .finished
            return [.noticeMatrix("Not linked: the bridge's XMPP connection dropped while asking; try again in a moment.")]
        case .idle, .linking, .finished:
            return []
        }
    }

    /// The link was recorded (nil) or refused (why).
    public mutating func linked(error: String?) -> [Action] {
        guard case .linking(let owner) = state else { return [] }
        state = .finished
        guard let error else {
            return [.sendPrivate(nick: owner.nick, body: "Thank you: this room is now bridged with \(request.roomLabel)."),
                    .sendGroupchat("This room is now bridged with the Matrix room \(request.roomLabel), as \(owner.nick) allowed."),
                    .leaveMUC(request.muc),
                    .noticeMatrix("Linked with \(request.muc), allowed by \(owner.nick).")]
        }
        // The reason may name Matrix ids: it goes to Matrix only.
        return [.sendPrivate(nick: owner.nick, body: "The bridge could not link this room after all; the Matrix side was told why."),
                .leaveMUC(request.muc), .noticeMatrix("Not linked: \(error).")]
    }

    private mutating func refuse(_ reason: String, tellingOwner: String? = nil) -> [Action] {
        let owner: String?
        if case .awaitingAnswer(let asked, _) = state { owner = asked.nick } else { owner = nil }
        state = .finished
        var actions: [Action] = []
        if let owner, let tellingOwner { actions.append(.sendPrivate(nick: owner, body: tellingOwner)) }
        return actions + [.leaveMUC(request.muc), .noticeMatrix("Not linked: \(reason).")]
    }

    static func describe(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        return seconds % 60 == 0 ? "\(seconds / 60) minute\(seconds == 60 ? "" : "s")" : "\(seconds) seconds"
    }
}
