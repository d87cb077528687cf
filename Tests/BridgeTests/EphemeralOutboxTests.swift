@testable import Bridge
import Foundation
import IsthmusCommon
import Synchronization
import Testing
import TestSupport

/// The outbox of best-effort sends keeps only the latest per target, in the order targets first appeared.
@Suite struct EphemeralOutboxTests {
    @Test func theLatestSendPerTargetWinsAndTargetsKeepTheirPlace() {
        let ghost = UserID("@_xmpp_romeo:localhost")!, other = UserID("@_xmpp_juliet:localhost")!
        var outbox = EphemeralOutbox()
        outbox.put(.typing(ghost: ghost, true))
        outbox.put(.readReceipt(ghost: ghost, EventID("$1")!))
        outbox.put(.typing(ghost: other, true))
        outbox.put(.typing(ghost: ghost, false))
        outbox.put(.readReceipt(ghost: ghost, EventID("$2")!))
        var taken: [EphemeralSend] = []
        while let next = outbox.take() { taken.append(next) }
        #expect(taken == [.typing(ghost: ghost, false), .readReceipt(ghost: ghost, EventID("$2")!), .typing(ghost: other, true)])
        #expect(outbox.isEmpty)
    }
}
