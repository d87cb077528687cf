import Bridge
import IsthmusCommon
import IsthmusStore
import Synchronization
import Testing
import TestSupport

/// Client mode's receipts (XEP-0198 `h` counts a stanza only once its effect is durable): a portal gives a stanza's
/// receipt once the event's handling ended — after the Matrix send and its map entry — and never when it was cut
/// short; an event no portal takes is handled at once.
@Suite struct XMPPReceiptTests {
    let room = RoomID("!room:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let elsewhere = JID("unlinked@conference.localhost")!

    /// The receipts given, in order.
    final class Given: Sendable {
        let tags = Mutex<[String]>([])
    }

    /// The fake XMPP link's events, each room message and presence with a receipt that notes its body (or nick) in
    /// `given`, as the account's connection would count it.
    struct WithReceipts: AsyncSequence, Sendable {
        typealias Element = XMPPLinkArrival
        typealias Failure = Never
        let events: AsyncStream<XMPPLinkEvent>
        let given: Given

        func makeAsyncIterator() -> Iterator { Iterator(base: events.makeAsyncIterator(), given: given) }

        struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<XMPPLinkEvent>.Iterator
            let given: Given

            mutating func next() async -> XMPPLinkArrival? {
                guard let event = await base.next() else { return nil }
                let tag: String? = switch event {
                case .message(let message): message.body
                case .presence(let presence): "presence \(presence.nick)"
                default: nil
                }
                guard let tag else { return XMPPLinkArrival(event) }
                let given = self.given
                return XMPPLinkArrival(event, receipt: XMPPReceipt { given.tags.withLock { $0.append(tag) } })
            }
        }
    }

    @Test func aMessageCountsAsHandledOnlyOnceItIsSentAndRecorded() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        try await store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc))
        let xmpp = FakeXMPPLink(), matrix = FakeMatrixLink()
        matrix.state.withLock { $0.members = [room: [:]] }
        let given = Given()
        let bridge = Bridge(store: store, xmpp: xmpp, matrix: matrix,
                            naming: BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!,
                            logger: .disabled, linkPollInterval: .milliseconds(20))
        let arrivals = WithReceipts(events: xmpp.events, given: given)
        let task = Task { await bridge.run(xmppArrivals: arrivals) }
        xmpp.feed.yield(.connected(reconnected: false))
        try await eventually("link active") { try await store.roomLinks().first?.status == .active }

        // The homeserver fails the first two sends: the message waits for the third, and so does its receipt.
        matrix.state.withLock { $0.unavailableSends = 2 }
        let first = xmpp.occupantSays("romeo", "first", in: muc)
        _ = xmpp.occupantSays("juliet", "not linked", in: elsewhere)
        try await eventually("the unlinked room's message handled at once") { given.tags.withLock { $0 } == ["not linked"] }
        try await eventually("first bridged and then counted", timeout: 15) { given.tags.withLock { $0.contains("first") } }
        #expect(matrix.state.withLock { $0.sent.map(\.message.body) } == ["first"])
        #expect(try await store.lastStanzaID(room) == first.stanzaID, "recorded before the receipt")

        // A send that never ends is cut short by the shutdown: its receipt is never given (the server delivers the
        // stanza again after a resumption, and the message map finds it if it was bridged after all).
        matrix.state.withLock { $0.hangingSendRooms = [room] }
        _ = xmpp.occupantSays("romeo", "cut short", in: muc)
        try await eventually("send under way") { matrix.state.withLock { $0.heldSends } == 1 }
        _ = xmpp.occupantSays("juliet", "barrier", in: elsewhere)
        try await eventually("the barrier handled") { given.tags.withLock { $0.last } == "barrier" }
        bridge.shutdown()
        xmpp.feed.finish()
        await task.value
        #expect(given.tags.withLock { $0 } == ["not linked", "first", "barrier"])
    }
}
