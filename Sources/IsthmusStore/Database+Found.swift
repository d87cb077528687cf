extension Database {
    /// Which of `keys` a lookup finds: `sql` is given the placeholders of an `IN (…)` list and selects the key column
    /// of the rows found (its value parsed back, so the key's type must read what it writes). It runs once per
    /// ``MultiRowChunks`` chunk: a set of 20 rooms is two statements (16 and 4 rows), not 20 (issue 26).
    func found<Key: SQLBindable & LosslessStringConvertible & Hashable>(
        among keys: some Collection<Key>, _ sql: (_ placeholders: String) -> String
    ) throws -> Set<Key> {
        var found: Set<Key> = []
        for chunk in MultiRowChunks.split(Array(keys)) {
            for key in try query(sql(MultiRowChunks.placeholders(chunk.count)), chunk.map { $0 as any SQLBindable },
                                 map: { $0.id(0, as: Key.self) }) {
                if let key { found.insert(key) }
            }
        }
        return found
    }
}
