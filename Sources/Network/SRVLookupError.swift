/// Why an SRV lookup gave no records (a name without any is not an error: it gives none). Each case names what was asked.
public enum SRVLookupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No answer within the time allowed.
    case timedOut(name: String)
    /// The lookup was abandoned: the task waiting for it was cancelled.
    case cancelled(name: String)
    /// The resolver gave up: no nameserver answered, or it failed or refused (SERVFAIL, REFUSED); what it said.
    case failed(name: String, reason: String)
    /// The answer is not a DNS message we accept: truncated, counts beyond its end, a compression loop, an SRV record
    /// too short for its fields.
    case malformedAnswer(name: String, reason: String)

    public var description: String {
        switch self {
        case .timedOut(let name): "no answer for \(name) in time"
        case .cancelled(let name): "the lookup of \(name) was cancelled"
        case .failed(let name, let reason): "the lookup of \(name) failed: \(reason)"
        case .malformedAnswer(let name, let reason): "the answer for \(name) is malformed: \(reason)"
        }
    }
}
