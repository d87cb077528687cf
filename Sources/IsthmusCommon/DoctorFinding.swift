/// One result of `isthmus doctor`: a named check, whether it passed, and a plain sentence saying what was found.
public struct DoctorFinding: Sendable, Equatable {
    public var ok: Bool
    public var check: String
    public var detail: String

    public init(ok: Bool, check: String, detail: String) {
        self.ok = ok
        self.check = check
        self.detail = detail
    }
}
