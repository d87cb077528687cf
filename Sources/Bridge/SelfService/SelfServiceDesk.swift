import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixClient
import Synchronization

/// Self-service linking from inside Matrix rooms: the bot accepts invitations (and leaves again when nothing is linked
/// in time), answers `!isthmus …` commands, and runs the consent handshakes with MUC owners (``LinkConsent``).
///
/// The appservice handler hands over each transaction's events once they are durable (``accept(_:)``, non-blocking);
/// ``run()`` handles each on a child task (every effect goes through ``LinkService``'s checks, so two commands at once
/// cannot link twice). Commands are not queued durably: one lost in a crash is simply sent again.
final class SelfServiceDesk: Sendable {
    enum Input: Sendable {
        case invited(RoomID, by: UserID)
        case command(BridgeCommand, room: RoomID, sender: UserID, eventID: EventID)
        case checkInvitations
    }

    /// A link request waiting for the MUC owner.
    struct Pending: Sendable {
        var muc: JID
        var ownerNick: String
    }

    let settings: SelfServiceSettings
    var links: LinkService { settings.links }
    var client: MatrixClient { settings.client }
    let context: BridgeContext
    let directory: PortalDirectory
    /// Asks the bridge to load links again (after a handshake released its MUC).
    let reloadLinks: @Sendable () -> Void
    let inputs: AsyncStream<Input>
    private let continuation: AsyncStream<Input>.Continuation
    /// Requests in flight, by Matrix room.
    let pending = Mutex<[RoomID: Pending]>([:])
    /// Command and invite event ids already taken (a homeserver may deliver a transaction twice); the newest 512.
    private let seen = Mutex<(set: Set<EventID>, order: [EventID])>(([], []))

    init(settings: SelfServiceSettings, context: BridgeContext, directory: PortalDirectory, reloadLinks: @escaping @Sendable () -> Void) {
        self.settings = settings
        self.context = context
        self.directory = directory
        self.reloadLinks = reloadLinks
        (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
    }

    var bot: UserID { context.matrix.botUserID }
    var logger: Logger { context.logger }

    /// Picks invitations of the bot and `!isthmus` commands out of a homeserver transaction whose events are durable.
    /// Non-blocking; safe from any context (the appservice listener calls it).
    func accept(_ events: [ClientEvent]) {
        for event in events where event.sender != bot && !context.matrix.isGhost(event.sender) {
            switch event.content {
            case .member(let member) where event.stateKey == bot.rawValue && member.membership == .invite:
                if firstSighting(event.eventID) { continuation.yield(.invited(event.roomID, by: event.sender)) }
            case .message(let message):
                guard message.relatesTo?.relationType != "m.replace",
                      let command = BridgeCommand.parse(msgtype: message.messageType, body: message.body) else { continue }
                if firstSighting(event.eventID) {
                    continuation.yield(.command(command, room: event.roomID, sender: event.sender, eventID: event.eventID))
                }
            default:
                continue
            }
        }
    }

    /// The bot was invited into `room` by `sender`, as a sync shows it (Matrix client mode: no event id; once per room
    /// while the invitation stands).
    func invited(_ room: RoomID, by sender: UserID) {
        guard sender != bot, !context.matrix.isGhost(sender), let key = EventID("$invite:" + room.rawValue), firstSighting(key) else { return }
        continuation.yield(.invited(room, by: sender))
    }

    private func firstSighting(_ id: EventID) -> Bool {
        seen.withLock { seen in
            guard seen.set.insert(id).inserted else { return false }
            seen.order.append(id)
            if seen.order.count > 512 { seen.set.remove(seen.order.removeFirst()) }
            return true
        }
    }

    /// Handles inputs until ``finish()``, and checks invitation deadlines meanwhile.
    func run() async {
        let continuation = self.continuation
        let interval = min(max(settings.inviteTimeout / 10, .seconds(1)), .seconds(60))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    continuation.yield(.checkInvitations)
                    try? await Task.sleep(for: interval)
                }
            }
            for await input in inputs {
                switch input {
                case .invited(let room, let sender):
                    group.addTask { await self.invited(room, by: sender) }
                case .command(let command, let room, let sender, let eventID):
                    group.addTask { await self.handle(command, room: room, sender: sender, eventID: eventID) }
                case .checkInvitations:
                    await checkInvitations()
                }
            }
            group.cancelAll()
        }
    }

    /// Stops ``run()`` (handshakes in flight end with it).
    func finish() {
        continuation.finish()
    }

    /// Posts `text` as an `m.notice` from the bot; `subject` makes the transaction id (a retried call posts once).
    func notice(_ text: String, in room: RoomID, subject: String) async {
        do {
            _ = try await context.matrix.send(OutgoingMatrixMessage(kind: .notice, body: text), as: bot, in: room,
                                              txnID: context.naming.noticeTxnID(subject: subject), timestamp: nil)
        } catch {
            logger.warning("Could not post a notice", metadata: ["matrix.room.id": room.rawValue, "error": "\(error)"])
        }
    }

    // MARK: Invitations

    /// The bot was invited: unless the room is linked (the CLI and the API join by themselves), it records the
    /// deadline and joins.
    private func invited(_ room: RoomID, by sender: UserID) async {
        guard settings.enabled else { return }
        do {
            if try await !context.store.linkedRooms(among: [room]).isEmpty { return }
            let deadline = context.clock.wallNow().addingTimeInterval(Double(settings.inviteTimeout.components.seconds))
            try await context.store.recordInvitation(InvitedRoom(room: room, invitedBy: sender, leaveAfter: deadline))
            try await context.matrix.join(room, as: bot)
        } catch {
            logger.warning("Could not accept an invitation", metadata: ["matrix.room.id": room.rawValue, "error": "\(error)"])
            // The deadline is forgotten only when the homeserver refused the join: after a timeout, a dropped connection
            // or a shutdown the join may have happened all the same, and the deadline must stay to make the bot leave.
            if let refused = error as? MatrixError, refused.kind == .homeserver {
                try? await context.store.forgetInvitation(room)
            }
            return
        }
        // No greeting: the CLI and the API also start with an invitation, and their rooms need no advice.
        logger.info("Joined a room on invitation", metadata: ["matrix.room.id": room.rawValue, "matrix.user.id": sender.rawValue])
    }

    /// Leaves the rooms whose invitation expired with nothing linked (and forgets linked ones).
    private func checkInvitations() async {
        do {
            for invitation in try await context.store.expiredInvitations(at: context.clock.wallNow()) {
                let room = invitation.room
                if pending.withLock({ $0[room] != nil }) { continue }   // a handshake is running: next round
                if try await !context.store.linkedRooms(among: [room]).isEmpty {
                    try await context.store.forgetInvitation(room)
                    continue
                }
                await notice("Nothing was linked within \(Self.describe(settings.inviteTimeout)), so I am leaving. "
                             + "Invite me again to try again.", in: room, subject: "expired:\(room.rawValue):\(invitation.leaveAfter.timeIntervalSince1970)")
                do {
                    try await context.matrix.leave(room, as: bot, reason: "nothing linked in time")
                } catch let refused as MatrixError where refused.kind == .homeserver {
                    // Not in the room any more (kicked, or the join never happened): nothing to leave.
                    logger.info("Could not leave an invited room", metadata: ["matrix.room.id": room.rawValue, "error": "\(refused)"])
                } catch {
                    // Unreachable homeserver or shutdown: the next round tries again (the notice is not repeated).
                    logger.info("Could not leave an invited room yet", metadata: ["matrix.room.id": room.rawValue, "error": "\(error)"])
                    continue
                }
                try await context.store.forgetInvitation(room)
                logger.info("Left an invited room: nothing linked in time", metadata: ["matrix.room.id": room.rawValue])
            }
        } catch {
            logger.warning("Could not check invitation deadlines", metadata: ["error": "\(error)"])
        }
    }

    /// "5 minutes", "1 day", "90 seconds".
    static func describe(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        if seconds % 86_400 == 0 { return seconds == 86_400 ? "1 day" : "\(seconds / 86_400) days" }
        if seconds % 3600 == 0 { return seconds == 3600 ? "1 hour" : "\(seconds / 3600) hours" }
        return LinkConsentMachine.describe(duration)
    }
}

/// What the self-service desk may do and how long things last (config `provisioning:`), with the services it uses.
public struct SelfServiceSettings: Sendable {
    /// `provisioning.self_service`: accept invitations and `!isthmus link`/`unlink`. Off: only `help` and `status`.
    public var enabled: Bool
    /// How long the MUC owner has to answer.
    public var consentTimeout: Duration
    /// How long the bot stays in an invited room while nothing is linked.
    public var inviteTimeout: Duration
    /// How long after the bridge's occupant joined the named owner's presence may still arrive.
    public var presenceGrace: Duration
    /// Links are made and ended through it (the same checks as the CLI and the API).
    public var links: LinkService
    /// For reading rooms' state (power levels, creators, names).
    public var client: MatrixClient

    public init(enabled: Bool, consentTimeout: Duration, inviteTimeout: Duration, presenceGrace: Duration = .seconds(2),
                links: LinkService, client: MatrixClient) {
        self.enabled = enabled
        self.consentTimeout = consentTimeout
        self.inviteTimeout = inviteTimeout
        self.presenceGrace = presenceGrace
        self.links = links
        self.client = client
    }
}
