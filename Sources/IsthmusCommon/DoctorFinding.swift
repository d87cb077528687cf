/// One line of `isthmus doctor`: what was checked, whether it works, and a plain explanation.
///
/// Produced by the XMPP half (`XMPPDoctor`) and the Matrix half; the command prints them and exits 1 if any is not ok.
public struct DoctorFinding: Sendable, Equatable {
    /// Whether the check passed.
    public var ok: Bool
    /// What was checked, e.g. `XMPP component handshake`.
    public var check: String
    /// What was found, in plain words, e.g. `the XMPP server rejected the component secret (not-authorized)`.
    public var detail: String
    /// A passed check that still deserves the operator's attention (printed as `warn`; not a failure).
    public var warning: Bool

    public init(ok: Bool, check: String, detail: String) {
        self.init(ok: ok, check: check, detail: detail, warning: false)
    }

    public init(ok: Bool, check: String, detail: String, warning: Bool) {
        self.ok = ok
        self.check = check
        self.detail = detail
        self.warning = warning
    }
}

extension DoctorFinding {
    /// A doctor check over a connection: runs `connection` (its run loop) beside `verdict` (which watches it and says
    /// what works) and returns the verdict's findings once it has one, stopping the run. Shared by the component's and
    /// the client's XMPP checks.
    public static func verdict(running connection: @escaping @Sendable () async -> Void,
                               _ verdict: @escaping @Sendable () async -> [DoctorFinding]) async -> [DoctorFinding] {
        await withTaskGroup(of: [DoctorFinding]?.self) { group in
            group.addTask {
                await connection()
                return nil
            }
            group.addTask { await verdict() }
            var result: [DoctorFinding] = []
            while let next = await group.next() {
                guard let findings = next else { continue }
                result = findings
                group.cancelAll()
            }
            return result
        }
    }
}
