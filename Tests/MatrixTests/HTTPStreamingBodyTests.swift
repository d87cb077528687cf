@testable import MatrixAppService
import Foundation
import IsthmusCommon
import Synchronization
import Testing

/// The bounded buffer between a media transfer's thread and libmicrohttpd's: bytes pass in order, an empty buffer
/// asks for a suspension and the next write resumes, a full one blocks the producer until read or its stall timeout,
/// and a consumer that went away stops the producer.
@Suite struct HTTPStreamingBodyTests {
    /// Counts resumes.
    final class Wakes: Sendable {
        let count = Mutex(0)
    }

    func read(_ body: HTTPStreamingBody, max: Int = 1 << 20, resumed: Wakes? = nil) -> (HTTPStreamingBody.ReadOutcome, [UInt8]) {
        var buffer = [UInt8](repeating: 0, count: max)
        let outcome = buffer.withUnsafeMutableBytes { raw in
            body.read(into: raw, resume: { resumed?.count.withLock { $0 += 1 } })
        }
        if case .bytes(let count) = outcome { return (outcome, Array(buffer.prefix(count))) }
        return (outcome, [])
    }

    @Test func bytesPassInOrderAndTheEndIsSeen() {
        let body = HTTPStreamingBody(length: 5)
        let resumed = Wakes()
        #expect(read(body, resumed: resumed).0 == HTTPStreamingBody.ReadOutcome.wait, "nothing yet: the connection is suspended")
        #expect(([1, 2, 3] as [UInt8]).withUnsafeBytes { body.write($0, stallTimeout: .seconds(1)) })
        #expect(resumed.count.withLock { $0 } == 1, "the write woke the suspended connection")
        #expect(read(body, max: 2).1 == [1, 2])
        #expect(read(body).1 == [3])
        #expect(([4, 5] as [UInt8]).withUnsafeBytes { body.write($0, stallTimeout: .seconds(1)) })
        body.finish()
        #expect(read(body).1 == [4, 5])
        #expect(read(body).0 == HTTPStreamingBody.ReadOutcome.end)
    }

    @Test func aFailedProducerClosesTheConnection() {
        let body = HTTPStreamingBody(length: 10)
        body.finish(failed: true)
        #expect(read(body).0 == HTTPStreamingBody.ReadOutcome.failed)
    }

    @Test func aFullBufferBlocksTheProducerUntilItsStallTimeout() {
        let body = HTTPStreamingBody(length: nil, capacity: 4096)
        let chunk = [UInt8](repeating: 7, count: 4096)
        #expect(chunk.withUnsafeBytes { body.write($0, stallTimeout: .milliseconds(50)) }, "fits")
        let start = ContinuousClock.now
        #expect(!chunk.withUnsafeBytes { body.write($0, stallTimeout: .milliseconds(200)) }, "nobody reads: the write gives up")
        #expect(ContinuousClock.now - start >= .milliseconds(150), "it waited for the reader first")
        #expect(read(body).1.count == 4096, "what was buffered is still there, never more than the capacity")
    }

    @Test func aReaderMakesRoomForABlockedProducer() async throws {
        let body = HTTPStreamingBody(length: nil, capacity: 4096)
        let total = 64 << 10
        let expected = (0..<total).map { UInt8(truncatingIfNeeded: $0) }
        // The producer on a thread of its own, as in production (it blocks while the buffer is full).
        let wrote = Wakes()
        try DedicatedThread.start(name: "test-producer") {
            if expected.withUnsafeBytes({ body.write($0, stallTimeout: .seconds(60)) }) { wrote.count.withLock { $0 = 1 } }
            body.finish()
        }
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + .seconds(60)
        reading: while ContinuousClock.now < deadline {
            let (outcome, bytes) = read(body, max: 1000)
            switch outcome {
            case .bytes: received += bytes
            case .end, .failed: break reading
            case .wait: await Task.yield()
            }
        }
        #expect(wrote.count.withLock { $0 } == 1, "every write went through")
        #expect(received == expected)
    }

    @Test func aConsumerThatWentAwayStopsTheProducer() {
        let body = HTTPStreamingBody(length: nil, capacity: 4096)
        body.abandon()
        #expect(body.isAbandoned)
        #expect(!([1] as [UInt8]).withUnsafeBytes { body.write($0, stallTimeout: .seconds(5)) })
    }
}
