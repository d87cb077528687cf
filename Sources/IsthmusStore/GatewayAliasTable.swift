import IsthmusCommon

/// `gateway_aliases`: the real spelling of Matrix aliases whose room addresses XMPP folded to lower case
/// (`#matrix%matrix.org` → `#Matrix:matrix.org`), learnt from room directories.
enum GatewayAliasTable {
    static let schema = """
        CREATE TABLE gateway_aliases (
            address  TEXT PRIMARY KEY,
            alias    TEXT NOT NULL
        );
        """
}

extension Store {
    /// The alias an address's localpart (`#matrix%matrix.org`) stands for, when a directory told its spelling.
    public func gatewayAlias(address: String) throws -> RoomAlias? {
        try read { db in
            try db.query("SELECT alias FROM gateway_aliases WHERE address = ?", address) { $0.id(0, as: RoomAlias.self) }.first ?? nil
        }
    }

    /// Records the spelling of aliases by their addresses' localparts (a new spelling replaces the old).
    public func recordGatewayAliases(_ aliases: [String: RoomAlias]) throws {
        guard !aliases.isEmpty else { return }
        try write { db in
            for (address, alias) in aliases.sorted(by: { $0.key < $1.key }) {
                try db.run("INSERT INTO gateway_aliases (address, alias) VALUES (?, ?) ON CONFLICT (address) DO UPDATE SET alias = excluded.alias",
                           address, alias)
            }
        }
    }
}
