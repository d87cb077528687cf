import FoundationEssentials
import FuzzSupport
import IsthmusCommon
import Matrix
@testable import MatrixAppService

/// The appservice listener's request path on arbitrary requests (what anyone who can reach the port sends): the
/// header-phase admission (route, token, body limit) and, for an admitted transaction, the body's JSON decoding.
///
/// Input: `METHOD SP target` where target is `path[?query]`, then header lines `name: value`, a blank line, the body
/// (lines end in LF). libmicrohttpd parses real requests; this reproduces what it hands over (lower-cased header
/// names, the last value winning, query items split at `&` and the first `=`).
///
/// Properties: nothing crashes; a refusal is a 4xx Matrix error naming its reason; an admitted route is authenticated
/// exactly when it needs a token; a decoded transaction keeps the path's id and accounts for every entry of `events`.
@main enum Harness { static func main() { runFuzzer(fuzzAppServiceRequest) } }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAppServiceRequest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let requestLine = String(decoding: input.field(until: 0x0A), as: UTF8.self)
    var headers: [String: String] = [:]
    while true {
        let line = input.field(until: 0x0A)
        if line.isEmpty { break }
        let text = String(decoding: line, as: UTF8.self)
        let (name, value) = text.firstIndex(of: ":").map { (text[..<$0], text[text.index(after: $0)...]) } ?? (text[...], "")
        headers[name.lowercased()] = value.trimmingPrefix(" ").description
    }
    let body = Data(input.rest())
    let (method, target) = requestLine.firstIndex(of: " ").map { (String(requestLine[..<$0]), String(requestLine[requestLine.index(after: $0)...])) }
        ?? (requestLine, "")
    let (path, query) = splitTarget(target)
    let head = HTTPRequestHead(method: method, path: path, query: query, headers: headers)

    let admission = AppServiceAdmission(gate: AppServiceGate(hsToken: "hs-secret", provisioningSecret: "provisioning-secret"),
                                        maxTransactionBytes: 1 << 20)
    let request = AppServiceRequest(method: method, path: path, query: query, authorization: headers["authorization"])
    switch admission.decide(head) {
    case .refuse(let response, let reason):
        guard (400..<500).contains(response.status), !reason.isEmpty else {
            fuzzFailure("refusal \(response.status) \(reason) is not a client error")
        }
    case .admit(let maxBodyBytes, let authenticated):
        guard case .serve(let route) = admission.gate.decide(request) else { fuzzFailure("admitted but the gate refuses") }
        guard authenticated == route.requiresAuthentication else { fuzzFailure("\(route.name): authenticated \(authenticated)") }
        if case .transaction(let id) = route, body.count <= maxBodyBytes {
            checkTransaction(body, id: id)
        }
    }
    return 0
}

/// `path?a=1&b` → the raw path and its query items.
private func splitTarget(_ target: String) -> (String, [AppServiceRequest.QueryItem]) {
    guard let mark = target.firstIndex(of: "?") else { return (target, []) }
    let items = target[target.index(after: mark)...].split(separator: "&").map { item in
        let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        return AppServiceRequest.QueryItem(name: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : nil)
    }
    return (String(target[..<mark]), items)
}

private func checkTransaction(_ body: Data, id: TransactionID) {
    switch TransactionDecoder.decode(body, id: id) {
    case .failure(let rejection):
        guard rejection.status == 400 else { fuzzFailure("transaction refused with \(rejection.status)") }
    case .success(let transaction):
        guard transaction.id == id else { fuzzFailure("transaction id changed") }
        // Every entry of `events` is either decoded or rejected (ephemeral rejections are counted separately).
        if case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: body),
           case .array(let events)? = object["events"] {
            let rejected = transaction.rejectedEvents.count
            guard transaction.events.count <= events.count, transaction.events.count + rejected >= events.count else {
                fuzzFailure("\(events.count) events became \(transaction.events.count) decoded + \(rejected) rejected")
            }
        }
    }
}
