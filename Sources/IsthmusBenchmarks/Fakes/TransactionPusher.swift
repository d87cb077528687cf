import IsthmusFakes
import Foundation
import Synchronization

/// The homeserver's side of the appservice API, as Synapse does it: one transaction in flight, events that arrive
/// meanwhile batched into the next one (at most 100), the same transaction retried until it gets 200.
/// Benchmark messages are stamped as sent when the transaction carrying them is written. Thread-safe.
final class TransactionPusher: Sendable {
    private struct Pending {
        var json: String
        var tracker: MessageTracker?
        var seq: Int
    }

    private struct State {
        var queue: [Pending] = []
        var waiter: CheckedContinuation<[Pending]?, Never>?
        var stopped = false
        var transactions = 0
        var events = 0
    }

    private let state = Mutex(State())
    private let port: Int
    private let hsToken: String
    private let maxBatch: Int
    /// Transaction ids as Synapse makes them: numbers from one increasing sequence (the bridge reads a hole in them as
    /// a possibly stranded transaction). A random start keeps runs against one store apart.
    private let firstTransaction = Int.random(in: 1...1_000_000_000)

    init(port: Int, hsToken: String, maxBatch: Int = 100) {
        self.port = port
        self.hsToken = hsToken
        self.maxBatch = maxBatch
    }

    /// Transactions and events pushed so far.
    var pushed: (transactions: Int, events: Int) { state.withLock { ($0.transactions, $0.events) } }

    /// Queues one event (its JSON object) for the next transaction; `tracker`'s message `seq` is stamped when sent.
    func enqueue(_ json: String, tracker: MessageTracker? = nil, seq: Int = 0) {
        state.withLock { state in
            state.queue.append(Pending(json: json, tracker: tracker, seq: seq))
            if let waiter = state.waiter {
                state.waiter = nil
                waiter.resume(returning: takeBatch(&state))
            }
        }
    }

    /// A benchmark `m.room.message` event from `sender` in `room`.
    static func messageEvent(room: String, sender: String, eventID: String, body: String) -> String {
        #"{"type":"m.room.message","event_id":"\#(eventID)","room_id":"\#(room)","sender":"\#(sender)","origin_server_ts":1700000000000,"unsigned":{"age":1},"content":{"msgtype":"m.text","body":"\#(body)"}}"#
    }

    private func takeBatch(_ state: inout State) -> [Pending] {
        let count = min(maxBatch, state.queue.count)
        let batch = Array(state.queue.prefix(count))
        state.queue.removeFirst(count)
        return batch
    }

    func stop() {
        state.withLock { state in
            state.stopped = true
            state.waiter?.resume(returning: nil)
            state.waiter = nil
        }
    }

    /// Pushes until ``stop()``; reconnects when the listener closes the connection.
    func run() async {
        var client: RawHTTPClient?
        var number = 0
        while true {
            let batch: [Pending]? = await withCheckedContinuation { (continuation: CheckedContinuation<[Pending]?, Never>) in
                state.withLock { state in
                    if state.stopped {
                        continuation.resume(returning: nil)
                    } else if state.queue.isEmpty {
                        state.waiter = continuation
                    } else {
                        continuation.resume(returning: takeBatch(&state))
                    }
                }
            }
            guard let batch else { return }
            number += 1
            let body = Array(("{\"events\":[" + batch.map(\.json).joined(separator: ",") + "],\"ephemeral\":[]}").utf8)
            let path = "/_matrix/app/v1/transactions/\(firstTransaction + number)"
            var delivered = false
            var attempts = 0
            while !delivered, !state.withLock({ $0.stopped }) {
                do {
                    if client == nil { client = try await RawHTTPClient(port: port) }
                    let response = try await client!.request(
                        "PUT", path, headers: [("Authorization", "Bearer \(hsToken)"), ("Content-Type", "application/json")],
                        body: body, willSend: { if attempts == 0 { for pending in batch { pending.tracker?.sent(pending.seq) } } })
                    attempts += 1
                    delivered = response.status == 200
                    if !delivered { try? await Task.sleep(for: .milliseconds(100)) }
                } catch {
                    client = nil
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            state.withLock { state in
                state.transactions += 1
                state.events += batch.count
            }
        }
    }
}
