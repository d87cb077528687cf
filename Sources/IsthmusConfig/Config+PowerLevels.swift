import IsthmusCommon

extension Config {
    /// `power_levels:` — the Matrix power level a MUC position gives the ghost of the XMPP occupant holding it (one
    /// way: Matrix power levels never change MUC affiliations or roles). The bot never gives a level at or above its
    /// own; 0 gives none.
    public struct PowerLevels: Sendable, Equatable {
        /// Affiliation `owner` (default 100).
        public var owner: Int64 = 100
        /// Affiliation `admin` (default 50).
        public var admin: Int64 = 50
        /// Role `moderator` (default 50).
        public var moderator: Int64 = 50

        public init() {}
    }

    /// `power_levels:` — `owner`, `admin`, `moderator`: each an integer from 0 to 100.
    static func decodePowerLevels(_ reader: inout ConfigReader) throws(ConfigError) -> PowerLevels {
        var levels = PowerLevels()
        for (key, path) in [("owner", \PowerLevels.owner), ("admin", \.admin), ("moderator", \.moderator)] {
            guard let value = try reader.optionalInt(key) else { continue }
            guard (0...100).contains(value) else { throw reader.invalid(key, "must be a power level from 0 to 100") }
            levels[keyPath: path] = Int64(value)
        }
        return levels
    }
}
