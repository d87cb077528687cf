import FoundationEssentials
import IsthmusCommon

/// `bridge_secrets`: secrets the bridge generates once and keeps (the key that signs media URLs, RICH.md §6), so
/// links handed out before a restart keep working after it.
enum BridgeSecretTable {
    static let schema = """
        CREATE TABLE bridge_secrets (
            name   TEXT PRIMARY KEY,
            value  TEXT NOT NULL
        );
        """
}

extension Store {
    /// The secret named `name`, generated (32 random bytes, hex) and stored on first use. The first writer wins, so
    /// two processes opening the store at once agree on one value (on PostgreSQL the second insert waits for the first
    /// to commit and then does nothing; its read, a new snapshot under READ COMMITTED, sees the winner's value). Does I/O on the store's thread.
    public func secret(named name: String) throws -> String {
        try write { db in
            let fresh = Digest.randomHex(bytes: 32)
            _ = try db.run("INSERT INTO bridge_secrets (name, value) VALUES (?, ?) ON CONFLICT DO NOTHING", name, fresh)
            let values = try db.query("SELECT value FROM bridge_secrets WHERE name = ?", name) { $0.string(0) }
            return (values.first ?? nil) ?? fresh
        }
    }
}
