import Foundation

/// A Matrix user with end-to-end encryption: matrix-nio 0.26 on vodozemac (scripts/lib/nio_client.py), logged in
/// as a test bed user on a device of its own. Its calls run off the cooperative pool (each may sync for seconds).
public final class NioUser: Sendable {
    /// A text message as nio saw it.
    public struct Message: Sendable, Equatable {
        public var sender: String
        public var body: String
        /// It came encrypted and nio decrypted it.
        public var decrypted: Bool
        public var eventID: String
        /// An `m.notice`.
        public var notice: Bool
    }

    public let userID: String
    public let deviceID: String
    /// scripts/lib/nio_client.py, one request at a time (internal: `NioUser+Media.swift` calls it too).
    let child: PythonLineChild

    /// Logs `localpart` in (a new device named `deviceName`) with its store in `storeDirectory`, and uploads its keys.
    /// The account's devices of that name from earlier tests are deleted (a second device in one test needs another name).
    public init(_ localpart: String, bed: TestBed, storeDirectory: URL, deviceName: String = "isthmus e2e (nio)") async throws {
        child = try PythonLineChild(script: "nio_client.py")
        try await child.readyAsync()
        try FileManager.default.createDirectory(at: storeDirectory, withIntermediateDirectories: true)
        let login = try await child.callAsync("login", ["homeserver": bed.synapseURL.absoluteString, "user": localpart,
                                                        "password": bed.password, "store": storeDirectory.path,
                                                        "device_name": deviceName])
        userID = login["user_id"] as? String ?? ""
        deviceID = login["device_id"] as? String ?? ""
    }

    /// Starts a direct chat with `user` as Element does, encrypted unless `encrypted` is false. Returns the room id.
    public func createDirectRoom(inviting user: String, encrypted: Bool = true) async throws -> String {
        try await child.callAsync("create_dm", ["invite": user, "encrypted": encrypted])["room_id"] as? String ?? ""
    }

    /// Drops nio's outbound room key in `room`: its next message there shares a new one (to-device, over Olm).
    public func rotate(in room: String) async throws {
        try await child.callAsync("rotate", ["room": room])
    }

    /// How many room keys nio sent again because another user's device asked for them (as Element does).
    public func forwardedKeys() async throws -> Int {
        try await child.callAsync("forwarded_keys", [:])["count"] as? Int ?? 0
    }

    /// Joins `room`, which the user was invited to.
    public func join(_ room: String) async throws {
        try await child.callAsync("join", ["room": room])
    }

    /// Waits until `user` joined `room` and nio knows a device of theirs (so what it sends is encrypted for them).
    public func waitJoined(_ user: String, in room: String, timeout: Int = 30) async throws {
        try await child.callAsync("wait_joined", ["room": room, "user": user, "timeout": timeout])
    }

    /// Sends a text message, encrypted in an encrypted room (the room key shared with every device of its members).
    @discardableResult
    public func send(_ body: String, to room: String) async throws -> String {
        try await child.callAsync("send", ["room": room, "body": body])["event_id"] as? String ?? ""
    }

    /// The text messages from `sender` in `room`, once there are `count` (or the timeout passed).
    public func messages(in room: String, from sender: String, count: Int = 1, timeout: Int = 30) async throws -> [Message] {
        let answer = try await child.callAsync("messages", ["room": room, "sender": sender, "count": count, "timeout": timeout])
        return (answer["messages"] as? [[String: Any]] ?? []).map {
            Message(sender: $0["sender"] as? String ?? "", body: $0["body"] as? String ?? "", decrypted: $0["decrypted"] as? Bool ?? false,
                    eventID: $0["event_id"] as? String ?? "", notice: $0["notice"] as? Bool ?? false)
        }
    }

    /// Every text message from `sender` in `room`, up to and including the first whose body is `sentinel` (which throws
    /// ``DeadlineExceeded`` if it has not come within `timeout` seconds). Send the sentinel after everything else:
    /// anything doubled before it is then in the list.
    public func messages(in room: String, from sender: String, untilBody sentinel: String, timeout: Int = 30) async throws -> [Message] {
        let deadline = Date().addingTimeInterval(Double(timeout))
        var seen: [Message] = []
        while true {
            if let end = seen.firstIndex(where: { $0.body == sentinel }) { return Array(seen[...end]) }
            let left = Int(deadline.timeIntervalSinceNow.rounded(.up))
            guard left > 0 else {
                throw DeadlineExceeded(what: "\(sentinel.debugDescription) from \(sender) in \(room) (seen \(seen.map(\.body)))",
                                       seconds: Double(timeout))
            }
            seen = try await messages(in: room, from: sender, count: seen.count + 1, timeout: left)
        }
    }
}
