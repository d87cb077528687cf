extension SQLiteError {
    /// The write failed for want of room: the disk is full (or the database reached `max_page_count`).
    public var isDiskFull: Bool { code.primary == .full }
}

extension Store {
    /// Whether the database can grow again: allocates about 64 KiB of new pages in a transaction that is always
    /// rolled back, so nothing is kept. Runs on the store's thread; does file I/O. False while the disk is full.
    public func probeWrite() -> Bool {
        do {
            try write { (db: SQLiteConnection) throws -> Void in
                try db.execute("""
                    CREATE TABLE isthmus_write_probe (filler BLOB);
                    INSERT INTO isthmus_write_probe VALUES (zeroblob(65536));
                    """)
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
