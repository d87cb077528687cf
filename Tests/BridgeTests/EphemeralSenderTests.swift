@testable import Bridge
import Foundation
import IsthmusCommon
import Synchronization
import Testing
import TestSupport

/// The portal's sender performs one send at a time off the portal's path; while one is on its way, later sends to the
/// same target replace each other, so a slow side never piles them up.
@Suite struct EphemeralSenderTests {
    @Test func whileOneSendIsSlowOnlyTheLatestPerTargetWaits() async throws {
        let ghost = UserID("@_xmpp_romeo:localhost")!
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let performed = Mutex<[EphemeralSend]>([])
        let sender = EphemeralSender { send in
            let first = performed.withLock { list in
                list.append(send)
                return list.count == 1
            }
            if first { for await _ in gate { break } }   // the first send hangs until the test opens the gate
        }
        sender.submit(.typing(ghost: ghost, true))
        try await eventually("the first send under way") { performed.withLock { $0.count } == 1 }
        sender.submit(.typing(ghost: ghost, false))
        sender.submit(.readReceipt(ghost: ghost, EventID("$1")!))
        sender.submit(.typing(ghost: ghost, true))
        open.yield()
        try await eventually("the rest performed") { performed.withLock { $0.count } == 3 }
        #expect(performed.withLock { $0 } == [.typing(ghost: ghost, true), .typing(ghost: ghost, true),
                                              .readReceipt(ghost: ghost, EventID("$1")!)])
        sender.finish()
    }
}
