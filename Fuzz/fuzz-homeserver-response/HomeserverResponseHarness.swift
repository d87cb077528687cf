import FoundationEssentials
import FuzzSupport
import IsthmusCommon
import Matrix
@testable import MatrixClient

/// What the client makes of a homeserver's answers (the homeserver, or anything in between, may send anything):
/// the header lines libcurl hands over (``CurlTransport/readHeaderLine(_:into:)``), a 2xx body decoded as each
/// model the client reads, an error body (``MatrixErrorBody``) and the retry decision built from it.
///
/// Input: one byte choosing the model, two bytes of status, header lines ending in LF up to a blank line, the body.
///
/// Properties: nothing crashes; a retry never waits longer than the policy's caps; the client's `Codable` models
/// that are sent back out (events, error bodies, state contents) encode to JSON that decodes and encodes to itself.
@main enum Harness { static func main() { runFuzzer(fuzzHomeserverResponse) } }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHomeserverResponse(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let model = input.byte()
    let status = 100 + (Int(input.byte()) << 8 | Int(input.byte())) % 500
    var headers: [String: String] = [:]
    while true {
        let line = input.field(until: 0x0A) + [0x0D, 0x0A]
        if line.count == 2 { break }
        line.withUnsafeBytes { CurlTransport.readHeaderLine($0, into: &headers) }
    }
    let body = Data(input.rest())

    if (200..<300).contains(status) {
        // As MatrixClient.perform: an empty 2xx body reads as `{}`.
        decodeModel(model, body.isEmpty ? Data("{}".utf8) : body)
    } else {
        checkRetry(status: status, body: body, headers: headers)
    }
    return 0
}

private func decodeModel(_ model: UInt8, _ body: Data) {
    let decoder = JSONDecoder()
    switch model % 13 {
    case 0: _ = try? decoder.decode(RoomMessagesPage.self, from: body)
    case 1: _ = try? decoder.decode(LoginResponse.self, from: body)
    case 2: _ = try? decoder.decode(ResolvedAlias.self, from: body)
    case 3: _ = try? decoder.decode(RoomMemberProfile.self, from: body)
    case 4: _ = try? decoder.decode(Bodies.EventIDResponse.self, from: body)
    case 5: _ = try? decoder.decode(Bodies.RoomIDResponse.self, from: body)
    case 6: _ = try? decoder.decode(Bodies.UserIDResponse.self, from: body)
    case 7: roundTrip(ClientEvent.self, body)
    case 8: roundTrip(PowerLevelsContent.self, body)
    case 9: roundTrip(MemberContent.self, body)
    case 10: roundTrip(TombstoneContent.self, body)
    case 11: decodeSync(body)
    default: roundTrip(MatrixErrorBody.self, body)
    }
}

/// A `/sync` answer as the bridge account reads it: whatever it holds, every event kept is of the room it is listed in.
private func decodeSync(_ body: Data) {
    let decoder = JSONDecoder()
    decoder.userInfo[SyncResponse.accountKey] = UserID("@relay:example.org")!
    guard let sync = try? decoder.decode(SyncResponse.self, from: body) else { return }
    for room in sync.joined where room.events.contains(where: { $0.roomID != room.room }) {
        fuzzFailure("a synced event is not of the room it was listed in: \(room)")
    }
}

/// Decodes `body` as `T`; if that works, what it encodes to must decode again and encode to the same JSON (a fixed
/// point: the value the bridge writes back out is stable; diagnostics such as why content was malformed may differ).
private func roundTrip<T: Codable>(_: T.Type, _ body: Data) {
    guard let value = try? JSONDecoder().decode(T.self, from: body) else { return }
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    let encoded: Data
    do { encoded = try encoder.encode(value) } catch { fuzzFailure("\(T.self) decoded but does not encode: \(error)") }
    let again: T
    do { again = try JSONDecoder().decode(T.self, from: encoded) } catch {
        fuzzFailure("\(T.self) encodes to what it cannot decode: \(String(decoding: encoded, as: UTF8.self)): \(error)")
    }
    guard let reencoded = try? encoder.encode(again), reencoded == encoded else {
        fuzzFailure("\(T.self) does not round-trip: \(value) → \(String(decoding: encoded, as: UTF8.self)) → \(again)")
    }
}

/// As MatrixClient.send: the error body and `Retry-After` become a ``RetryPolicy/Failure``; every decision is bounded.
private func checkRetry(status: Int, body: Data, headers: [String: String]) {
    let errorBody = try? JSONDecoder().decode(MatrixErrorBody.self, from: body)
    let failure = RetryPolicy.Failure.status(status, errcode: errorBody?.errcode,
                                             retryAfterMilliseconds: errorBody?.retryAfterMilliseconds,
                                             retryAfterHeaderSeconds: headers["retry-after"].flatMap { Int($0) })
    _ = errorBody?.error ?? String(decoding: body.prefix(200), as: UTF8.self)
    let policy = RetryPolicy()
    for mode in [RetryPolicy.Mode.full, .rateLimitOnly] {
        for attempts in [1, policy.maxAttempts] {
            if case .retry(let wait) = policy.decide(failure, mode: mode, attempts: attempts, rateLimitWaits: 0) {
                guard wait >= .zero, wait <= max(policy.maxRateLimitWait, policy.maxBackoff) else {
                    fuzzFailure("retry after \(wait) for status \(status)")
                }
            }
        }
    }
}
