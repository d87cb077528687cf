import IsthmusCommon

/// The consent handshake of a self-service link, as a value: no I/O, no clock (time is passed in). The bridge joins
/// the MUC, checks that the named owner is present as `owner` or `admin`, asks that occupant in private, and links
/// only on a private `yes` from the same occupant (same occupant-id, else same real JID, else same nick) before the
/// deadline. Whatever else happens, nothing is linked and the requester is told why. The actor that owns the request
/// performs the actions and feeds their outcomes back.
public struct LinkConsentMachine: Sendable {
    /// What was asked in Matrix.
    public struct Request: Sendable, Equatable {
        public var room: RoomID
        public var requester: UserID
        public var muc: JID
        public var ownerNick: String

        public init(room: RoomID, requester: UserID, muc: JID, ownerNick: String) {
            self.room = room
            self.requester = requester
            self.muc = muc
            self.ownerNick = ownerNick
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
        /// → ``joined(_:now:)`` or ``joinFailed(_:)``: the bridge's occupant joins the MUC.
        case joinMUC(JID)
        /// A private message from the bridge's occupant to `nick` in the MUC.
        case sendPrivate(nick: String, body: String)
        /// Call ``timeElapsed(now:)`` at this time.
        case scheduleTimeout(at: ContinuousClock.Instant)
        /// The bridge's occupant leaves the MUC (the portal joins it again once linked).
        case leaveMUC(JID)
        /// → ``linked(error:)``: record the link (as `isthmus link` would).
        case link(Request)
        /// An `m.notice` from the bot in the Matrix room.
        case noticeMatrix(String)
    }

    enum State: Sendable, Equatable {
        case idle
        case joining
        case awaitingAnswer(owner: Occupant, deadline: ContinuousClock.Instant)
        case linking(owner: Occupant)
        case finished
    }

    public let request: Request
    let timeout: Duration
    private(set) var state = State.idle

    public init(request: Request, timeout: Duration) {
        self.request = request
        self.timeout = timeout
    }

    /// Whether the handshake is over (linked or refused).
    public var isFinished: Bool { state == .finished }

    public mutating func start() -> [Action] {
        guard state == .idle else { return [] }
        state = .joining
        return [.joinMUC(request.muc)]
    }

    /// The bridge's occupant is in the MUC; `occupants` are the others, from their presences.
    public mutating func joined(_ occupants: [Occupant], now: ContinuousClock.Instant) -> [Action] {
        guard state == .joining else { return [] }
        guard let owner = occupants.first(where: { $0.nick == request.ownerNick }) else {
            return refuse("\(request.ownerNick) is not in \(request.muc)")
        }
        guard owner.affiliation == .owner || owner.affiliation == .admin else {
            return refuse("\(request.ownerNick) is not an owner or admin of \(request.muc)")
        }
        let deadline = now + timeout
        state = .awaitingAnswer(owner: owner, deadline: deadline)
        return [
            .sendPrivate(nick: owner.nick, body: "\(request.requester) asks to bridge \(request.muc) with the Matrix room \(request.room). "
                + "Reply yes within \(Self.describe(timeout)) to allow; anything else refuses."),
            .scheduleTimeout(at: deadline),
            .noticeMatrix("Asked \(owner.nick) in \(request.muc) to allow the link; waiting up to \(Self.describe(timeout))."),
        ]
    }

    /// The MUC could not be joined.
    public mutating func joinFailed(_ reason: String) -> [Action] {
        guard state == .joining else { return [] }
        state = .finished
        return [.noticeMatrix("Not linked: the bridge cannot join \(request.muc): \(reason)")]
    }

    /// A private message to the bridge's occupant in the MUC. Only the asked occupant's answer counts.
    public mutating func privateMessage(from sender: Occupant, body: String, now: ContinuousClock.Instant) -> [Action] {
        guard case .awaitingAnswer(let owner, let deadline) = state, sender.isSame(as: owner) else { return [] }
        if now >= deadline { return timeElapsed(now: now) }
        let answer = body.lowercased().filter { !$0.isWhitespace && $0 != "." && $0 != "!" }
        guard answer == "yes" || answer == "y" else {
            return refuse("\(owner.nick) did not allow it", tellingOwner: "Understood: \(request.muc) is not bridged.")
        }
        state = .linking(owner: owner)
        return [.leaveMUC(request.muc), .link(request)]
    }

    /// The deadline may have passed.
    public mutating func timeElapsed(now: ContinuousClock.Instant) -> [Action] {
        guard case .awaitingAnswer(let owner, let deadline) = state, now >= deadline else { return [] }
        return refuse("\(owner.nick) did not answer within \(Self.describe(timeout))",
                      tellingOwner: "The request to bridge \(request.muc) with \(request.room) expired.")
    }

    /// The link was recorded (nil) or refused (why).
    public mutating func linked(error: String?) -> [Action] {
        guard case .linking(let owner) = state else { return [] }
        state = .finished
        guard let error else {
            return [.noticeMatrix("Linked with \(request.muc), allowed by \(owner.nick)."),
                    .sendPrivate(nick: owner.nick, body: "Thank you: \(request.muc) is now bridged with \(request.room).")]
        }
        return [.noticeMatrix("Not linked: \(error)")]
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
