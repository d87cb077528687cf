@testable import Bridge
import Synchronization
import TestSupport
import Testing

/// ``ActivationGate``: at most `limit` holders at once; the others wait and get in, in the order they asked.
@Suite struct ActivationGateTests {
    final class Log: Sendable {
        let entries = Mutex<[Int]>([])
        func add(_ value: Int) { entries.withLock { $0.append(value) } }
        var all: [Int] { entries.withLock { $0 } }
    }

    @Test func theLimitHoldsAndWaitersGetInInOrder() async throws {
        let gate = ActivationGate(limit: 2)
        await gate.enter()
        await gate.enter()
        let admitted = Log()
        var waiting: [Task<Void, Never>] = []
        for index in 0..<3 {
            waiting.append(Task {
                await gate.enter()
                admitted.add(index)
            })
            // Each asks before the next (the order the gate must keep).
            try await eventually("waiter \(index) queued") { gate.waiting == index + 1 }
        }
        #expect(admitted.all.isEmpty, "no permit is free")
        gate.leave()
        try await eventually("first waiter in") { admitted.all == [0] }
        gate.leave()
        gate.leave()
        for task in waiting { await task.value }
        #expect(admitted.all == [0, 1, 2])
        #expect(gate.waiting == 0)
    }
}
