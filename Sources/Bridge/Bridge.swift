import Foundation
import IsthmusCommon
import IsthmusStore

/// The bridge core: one ``Portal`` per link, fed by the XMPP link's events and the homeserver's transactions,
/// plus a watcher that applies link changes made by the CLI while it runs.
///
/// ``run(xmppEvents:)`` owns all routing state in one loop (no locks): XMPP events, inbox notifications, link
/// reloads and shutdown arrive as commands on one stream and are handled in order. Portals run as child tasks.
public final class Bridge: Sendable {
    private let context: BridgeContext
    private let commands: AsyncStream<Command>
    private let control: AsyncStream<Command>.Continuation
    /// How often the store is checked for link changes made by `isthmus link/unlink`.
    private let linkPollInterval: Duration
    /// How often each portal checks (XEP-0410 self-ping) that the bridge is still in its MUC.
    private let selfCheckInterval: Duration

    enum Command: Sendable {
        case xmpp(XMPPLinkEvent)
        case inbox(Set<RoomID>)
        case transactionFailed
        case reloadLinks
        case selfCheck
        case portal(PortalNotice)
        case shutdown
    }

    /// Creates the bridge over a store and both links. No I/O until ``run(xmppEvents:)``.
    /// `timelineCheckWindow`: see `Portal+MatrixCatchUp` (tests shorten it).
    public init(store: Store, xmpp: any XMPPLink, matrix: any MatrixLink, naming: BridgeNaming, logger: Logger,
                linkPollInterval: Duration = .seconds(1), selfCheckInterval: Duration = .seconds(300),
                timelineCheckWindow: Duration = .seconds(20)) {
        let (commands, control) = AsyncStream.makeStream(of: Command.self)
        self.commands = commands
        self.control = control
        self.linkPollInterval = linkPollInterval
        self.selfCheckInterval = selfCheckInterval
        context = BridgeContext(store: store, xmpp: xmpp, matrix: matrix, naming: naming, logger: logger.with(label: "bridge"),
                                timelineCheckWindow: timelineCheckWindow, notify: { control.yield(.portal($0)) })
    }

    /// Runs until ``shutdown()``: routes events to portals and applies link changes. Graceful: portals finish the
    /// event at hand; nobody leaves any room.
    public func run(xmppEvents: AsyncStream<XMPPLinkEvent>) async {
        let logger = context.logger
        let control = self.control
        let interval = linkPollInterval
        let selfCheckInterval = self.selfCheckInterval
        let store = context.store
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in xmppEvents { control.yield(.xmpp(event)) }
            }
            group.addTask {
                var lastVersion = -1
                while !Task.isCancelled {
                    let version = (try? await store.linkChangeVersion()) ?? lastVersion
                    if version != lastVersion {
                        lastVersion = version
                        control.yield(.reloadLinks)
                    }
                    try? await Task.sleep(for: interval)
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: selfCheckInterval)
                    control.yield(.selfCheck)
                }
            }
            var router = PortalRouter()
            for await command in commands {
                switch command {
                case .xmpp(let event):
                    router.route(event, logger: logger)
                case .inbox(let rooms):
                    for room in rooms { router.portals[room]?.enqueue(.matrixInbox) }
                case .transactionFailed:
                    for portal in router.portals.values { portal.enqueue(.checkTimeline) }
                case .reloadLinks:
                    await reloadLinks(&router, group: &group)
                case .selfCheck:
                    for portal in router.portals.values { portal.enqueue(.selfCheck) }
                case .portal(let notice):
                    if case .unlinked(let room) = notice { router.remove(room) }
                case .shutdown:
                    logger.info("Bridge stopping")
                    for portal in router.portals.values { portal.finish() }
                    group.cancelAll()
                    return
                }
            }
        }
    }

    /// Stops ``run(xmppEvents:)`` after the events already queued.
    public func shutdown() {
        control.yield(.shutdown)
        control.finish()
    }

    /// Accepts Matrix events from a homeserver transaction: events of linked rooms are written to the durable inbox
    /// (this returns only once they are), and their portals are told. Events of other rooms are ignored.
    /// With `transaction`, its id is recorded as processed in the same commit as the events (alone when none is kept).
    /// Called from the appservice listener; safe from any context.
    /// If it throws, nothing is recorded and the homeserver will retry the transaction later — and may then strand the
    /// next one (see `Portal+MatrixCatchUp`), so portals check their timelines for a while.
    public func acceptMatrixEvents(_ events: [MatrixRoomEvent], markingProcessed transaction: TransactionID? = nil) async throws {
        do {
            var rows: [(room: RoomID, eventID: EventID, payload: [UInt8])] = []
            if !events.isEmpty {
                let linked = try await context.store.linkedRooms(among: Set(events.map(\.room)))
                for event in events where linked.contains(event.room) {
                    rows.append((event.room, event.eventID, try event.inboxPayload()))
                }
            }
            guard !rows.isEmpty else {
                if let transaction { try await context.store.markTransactionProcessed(transaction) }
                return
            }
            let added: [InboxEntry]
            if let transaction {
                added = try await context.store.enqueueInbox(rows, markingProcessed: transaction)
            } else {
                added = try await context.store.enqueueInbox(rows)
            }
            if !added.isEmpty { control.yield(.inbox(Set(added.map(\.room)))) }
        } catch {
            control.yield(.transactionFailed)
            throw error
        }
    }

    /// Whether `user` is a ghost this bridge created (for the homeserver's user query).
    public func isKnownGhost(_ user: UserID) async -> Bool {
        (try? await context.store.isKnownGhost(user)) ?? false
    }

    private func reloadLinks(_ router: inout PortalRouter, group: inout TaskGroup<Void>) async {
        let links: [RoomLink]
        do {
            links = try await context.store.roomLinks()
        } catch {
            context.logger.error("Could not read links", metadata: ["error": "\(error)"])
            return
        }
        for link in links {
            if let portal = router.portals[link.matrixRoom] {
                if link.unlinking, !router.unlinking.contains(link.matrixRoom) {
                    router.unlinking.insert(link.matrixRoom)
                    portal.enqueue(.unlink)
                }
                continue
            }
            let portal = Portal(link: link, context: context)
            router.add(portal)
            group.addTask { await portal.run() }
            if link.unlinking {
                router.unlinking.insert(link.matrixRoom)
                await portal.markConnected(router.xmppConnected)
                portal.enqueue(.unlink)
            } else if router.xmppConnected {
                portal.enqueue(.activate)
            }
            context.logger.info("Link loaded", metadata: ["matrix.room.id": link.matrixRoom.rawValue, "xmpp.muc": link.muc.description])
        }
    }
}
