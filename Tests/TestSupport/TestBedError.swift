import Foundation

/// Why the test bed could not be read or driven.
public enum TestBedError: Error, CustomStringConvertible, LocalizedError {
    /// `ISTHMUS_TEST_CONFIG` is unset: the real-server tests run without a test bed.
    case notConfigured
    /// `ISTHMUS_TEST_POSTGRES_URL` is unset: the PostgreSQL tests run without the test bed's PostgreSQL.
    case postgresNotConfigured
    /// A variable `scripts/testbed` always writes is missing from the environment.
    case missingVariable(String)
    /// A variable holds something that is not a port, URL or path.
    case invalidValue(variable: String, value: String)
    /// `scripts/testbed` exited non-zero (or was killed); `output` is what it printed.
    case commandFailed(arguments: [String], status: Int32, output: String)
    /// `scripts/testbed` did not finish (or Foundation did not notice) within `seconds`; `output` is what it printed.
    case commandTimedOut(arguments: [String], seconds: Double, output: String)

    /// A message that says what to do about it.
    public var description: String {
        switch self {
        case .notConfigured:
            return "ISTHMUS_TEST_CONFIG is not set: run the real-server tests through scripts/test "
                + "(or source DIR/env after scripts/testbed start)"
        case .postgresNotConfigured:
            return "ISTHMUS_TEST_POSTGRES_URL is not set: run the PostgreSQL tests through scripts/test "
                + "(or source DIR/env after scripts/testbed start --postgres)"
        case .missingVariable(let name):
            return "\(name) is not set: DIR/env from scripts/testbed start sets it; source the whole file"
        case .invalidValue(let name, let value):
            return "\(name) has an invalid value '\(value)'"
        case .commandFailed(let arguments, let status, let output):
            return "scripts/testbed \(arguments.joined(separator: " ")) failed with status \(status):\n\(output)"
        case .commandTimedOut(let arguments, let seconds, let output):
            return "scripts/testbed \(arguments.joined(separator: " ")) did not finish within \(Int(seconds)) s:\n\(output)"
        }
    }

    /// The same as ``description``, for Foundation's error reporting.
    public var errorDescription: String? { description }
}
