import Foundation

/// How much longer tests wait under a slow build: `ISTHMUS_TEST_TIME_SCALE` (default 1). `scripts/sanitize` sets
/// it (ThreadSanitizer runs code 5–15× slower), so that deadlines stay deadlines for a correct program instead of
/// failing on speed. Applied by ``withDeadline(_:seconds:_:)``, ``eventually(_:timeout:pollEvery:_:)`` and
/// ``eventuallyValue(_:timeout:pollEvery:_:)``; timeouts the code under test is configured with are not scaled.
public enum TestTimeScale {
    public static let factor: Double = {
        guard let text = ProcessInfo.processInfo.environment["ISTHMUS_TEST_TIME_SCALE"], let value = Double(text), value >= 1
        else { return 1 }
        return value
    }()

    /// `seconds` scaled.
    public static func scaled(_ seconds: Double) -> Double { seconds * factor }
}
