extension Store {
    /// Whether the database can grow again: writes about 64 KiB in a transaction that is always rolled back, so
    /// nothing is kept. Runs on the store's thread; does I/O. False while the disk is full (or the database is
    /// unreachable).
    public func probeWrite() -> Bool {
        let probe = switch dialect {
        case .sqlite: """
            CREATE TABLE isthmus_write_probe (filler BLOB);
            INSERT INTO isthmus_write_probe VALUES (zeroblob(65536));
            """
        // Incompressible-enough text (hex digests), so TOAST compression does not shrink the write to nothing.
        case .postgres: """
            CREATE TABLE isthmus_write_probe (filler TEXT);
            INSERT INTO isthmus_write_probe SELECT string_agg(md5(i::text), '') FROM generate_series(1, 2048) AS i;
            """
        }
        do {
            try write { (db: Database) throws -> Void in
                try db.execute(probe)
                throw ProbeRollback()
            }
        } catch is ProbeRollback {
            return true
        } catch {
            return false
        }
        return true
    }

    private struct ProbeRollback: Error {}
}
