import Testing
@testable import XMPPClient

/// XEP-0198's `h` counts a handled prefix of the inbound stanzas, whatever order the bridge finishes them in.
@Suite struct InboundLedgerTests {
    @Test func aStanzaHandledEarlyWaitsUntilEveryOneBeforeItIsHandled() {
        var ledger = InboundLedger()
        ledger.reset(link: 1)
        let first = ledger.arrived(handled: false)
        let answer = ledger.arrived(handled: true)   // an answer a request took
        let third = ledger.arrived(handled: false)
        #expect(answer.position == 1)
        ledger.markHandled(third)
        #expect(ledger.takeHandledPrefix() == 0)
        ledger.markHandled(first)
        #expect(ledger.takeHandledPrefix() == 3)
        #expect(ledger.takeHandledPrefix() == 0)
        // Positions go on after what was counted.
        let fourth = ledger.arrived(handled: false)
        #expect(fourth.position == 3)
        ledger.markHandled(fourth)
        ledger.markHandled(fourth)   // twice: still one
        #expect(ledger.takeHandledPrefix() == 1)
    }

    @Test func aTicketOfAnEarlierConnectionIsIgnored() {
        var ledger = InboundLedger()
        ledger.reset(link: 1)
        let old = ledger.arrived(handled: false)
        ledger.reset(link: 2)
        let new = ledger.arrived(handled: false)
        #expect(old.position == new.position)
        ledger.markHandled(old)
        #expect(ledger.takeHandledPrefix() == 0)
        ledger.markHandled(new)
        #expect(ledger.takeHandledPrefix() == 1)
    }

    @Test func inOrderConsumersMarkTheOldestUnhandled() {
        var ledger = InboundLedger()
        ledger.reset(link: 1)
        _ = ledger.arrived(handled: false)
        _ = ledger.arrived(handled: true)
        _ = ledger.arrived(handled: false)
        ledger.markOldestHandled()
        #expect(ledger.takeHandledPrefix() == 2)
        ledger.markOldestHandled()
        #expect(ledger.takeHandledPrefix() == 1)
    }
}
