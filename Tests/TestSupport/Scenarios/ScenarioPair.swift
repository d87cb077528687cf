/// One linked room pair as a scenario sees it: a Matrix member and an XMPP occupant talking through the bridge.
///
/// Implemented twice — over the fake links with the bridge in-process (`BridgeTests`), and over real Prosody,
/// Synapse and `isthmus serve` (`EndToEndTests`) — so the same scenario body (``BridgeScenarios``) runs on both tiers,
/// as Hummingbird runs one test body in-process and over a socket.
public protocol ScenarioPair: Sendable {
    /// The XMPP occupant says `body` in the MUC (also while the bridge is stopped: the room archives it).
    func xmppSays(_ body: String) async throws
    /// The Matrix member says `body` (`m.text`) in the room (also while the bridge is stopped: the homeserver keeps it).
    func matrixSays(_ body: String) async throws
    /// The bodies that reached the Matrix room from the XMPP side, in order, once there are at least `count`.
    func arrivedInMatrix(atLeast count: Int) async throws -> [String]
    /// The bodies that reached the MUC from the Matrix side, in order, once there are at least `count`.
    func arrivedInXMPP(atLeast count: Int) async throws -> [String]
    /// Stops the bridge cleanly (state stays in its store).
    func stopBridge() async throws
    /// Starts the bridge again on the same store.
    func startBridge() async throws
}

/// A scenario's expectation that did not hold.
public struct ScenarioFailure: Error, CustomStringConvertible {
    public var description: String
}

/// Fails the scenario unless `actual == expected`.
public func scenarioExpect<T: Equatable>(_ actual: T, _ expected: T, _ what: String) throws {
    guard actual == expected else { throw ScenarioFailure(description: "\(what): got \(actual), expected \(expected)") }
}

/// Scenario bodies shared by the fake tier and the real tier. Each ends with a sentinel each way, so "nothing more
/// arrived" is read only after it could have (per-room order holds).
public enum BridgeScenarios {
    /// Bodies that must cross byte for byte.
    public static let bodies = ["plain", "  spaced  ", "two\nlines", "emoji 😀 ünïcödé 中文", "<b>not markup</b> & &amp;"]

    /// Text crosses both ways byte for byte, exactly once.
    public static func textBothWaysOnce(_ pair: some ScenarioPair) async throws {
        for body in bodies { try await pair.xmppSays(body) }
        for body in bodies { try await pair.matrixSays(body) }
        try await pair.xmppSays("sentinel x")
        try await pair.matrixSays("sentinel m")
        try scenarioExpect(try await pair.arrivedInMatrix(atLeast: bodies.count + 1), bodies + ["sentinel x"], "in Matrix")
        try scenarioExpect(try await pair.arrivedInXMPP(atLeast: bodies.count + 1), bodies + ["sentinel m"], "in XMPP")
    }

    /// Messages said on both sides while the bridge is stopped arrive once, in order, before what is said after it
    /// starts again.
    public static func downtimeIsCaughtUpOnceInOrder(_ pair: some ScenarioPair) async throws {
        try await pair.xmppSays("x before")
        try await pair.matrixSays("m before")
        _ = try await pair.arrivedInMatrix(atLeast: 1)
        _ = try await pair.arrivedInXMPP(atLeast: 1)
        try await pair.stopBridge()
        for index in 0..<3 { try await pair.xmppSays("x while down \(index)") }
        for index in 0..<3 { try await pair.matrixSays("m while down \(index)") }
        try await pair.startBridge()
        try await pair.xmppSays("x after")
        try await pair.matrixSays("m after")
        try scenarioExpect(try await pair.arrivedInMatrix(atLeast: 5), ["x before"] + (0..<3).map { "x while down \($0)" } + ["x after"],
                           "in Matrix")
        try scenarioExpect(try await pair.arrivedInXMPP(atLeast: 5), ["m before"] + (0..<3).map { "m while down \($0)" } + ["m after"],
                           "in XMPP")
    }
}
