import Foundation

/// vodozemac 0.10.0 (PyPI; the Rust Olm/Megolm Element uses) run through scripts/lib/vodozemac_oracle.py: the
/// differential tests' other side. Objects live in the child under names the test chooses. Each test starts its own.
public final class VodozemacOracle {
    /// The version the differential tests are written against (scripts/install-deps installs it).
    public static let expectedVersion = "0.10.0"

    private let child: PythonLineChild

    /// Starts the oracle and checks that it imported vodozemac 0.10.0.
    public init() throws {
        child = try PythonLineChild(script: "vodozemac_oracle.py")
        let ready = try child.ready()
        guard let version = ready["vodozemac"] as? String, version == Self.expectedVersion else {
            throw PythonLineChild.Failure.notInstalled("vodozemac \(ready["vodozemac"] ?? "?") instead of \(Self.expectedVersion)")
        }
    }

    /// ``init()`` on a Dispatch thread, for async tests: starting Python and importing vodozemac takes a while, and a
    /// cooperative thread blocked on it meanwhile (there are as many as cores: 2 in CI) stalls every other async test.
    public static func start() async throws -> VodozemacOracle {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try VodozemacOracle() }) }
        }
    }

    /// Sends `op` with its arguments and returns the answer; a refusal by vodozemac throws.
    @discardableResult
    public func call(_ op: String, _ arguments: [String: Any] = [:]) throws -> [String: Any] {
        try child.call(op, arguments)
    }

    /// vodozemac's error text for `op`, or nil when it succeeded (for the refusal tests).
    public func refusal(_ op: String, _ arguments: [String: Any] = [:]) throws -> String? {
        try child.refusal(op, arguments)
    }

    /// A string field of an answer.
    public func string(_ op: String, _ arguments: [String: Any] = [:], _ field: String) throws -> String {
        guard let value = try call(op, arguments)[field] as? String else { throw PythonLineChild.Failure.badAnswer("\(op) has no \(field)") }
        return value
    }
}

extension String {
    /// UTF-8 bytes in unpadded base64, for the oracle's byte fields.
    public var base64UTF8: String {
        var text = Data(utf8).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
