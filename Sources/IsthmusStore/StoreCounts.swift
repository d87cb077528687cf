import IsthmusCommon

/// How much the store holds, for the bridge's gauges: links by status, ghosts, puppets, queued Matrix events.
public struct StoreCounts: Sendable, Equatable {
    /// Links by `room_links.status` (pending, active, error).
    public var linksByStatus: [String: Int]
    /// Registered ghost users (`ghosts`).
    public var ghosts: Int
    /// Puppet occupants, one per linked room and Matrix user (`puppets`).
    public var puppets: Int
    /// Matrix events accepted but not yet handled (`matrix_inbox`).
    public var inbox: Int

    public init(linksByStatus: [String: Int], ghosts: Int, puppets: Int, inbox: Int) {
        self.linksByStatus = linksByStatus
        self.ghosts = ghosts
        self.puppets = puppets
        self.inbox = inbox
    }
}

extension Store {
    /// Counts the rows behind the gauges in one read (four `COUNT`s). Runs on the store's actor.
    public func counts() throws -> StoreCounts {
        try read { db in
            var links: [String: Int] = [:]
            for (status, count) in try db.query("SELECT status, COUNT(*) FROM room_links GROUP BY status", map: { ($0.string(0) ?? "", $0.int(1) ?? 0) }) {
                links[status] = count
            }
            func count(_ table: String) throws -> Int {
                try db.query("SELECT COUNT(*) FROM \(table)", map: { $0.int(0) ?? 0 }).first ?? 0
            }
            return StoreCounts(linksByStatus: links, ghosts: try count("ghosts"), puppets: try count("puppets"),
                               inbox: try count("matrix_inbox"))
        }
    }
}
