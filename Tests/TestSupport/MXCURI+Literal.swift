import IsthmusCommon

/// Tests write `mxc://` URIs as string literals; a literal that is not a valid one stops the test at once.
extension MXCURI: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) {
        guard let parsed = MXCURI(mxc: value) else { preconditionFailure("not an mxc:// URI: \(value)") }
        self = parsed
    }
}
