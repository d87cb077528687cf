extension Config {
    /// `ha:` — an active/standby pair: two `serve` processes with the same config and the same database, of which
    /// the one holding the lease in the database is active (docs/deploy.md §10). Off by default: one process, no lease.
    public struct HighAvailability: Sendable, Equatable {
        /// `enabled`: take part in a pair (start as a standby, act only while holding the lease).
        public var enabled = false
        /// `lease_ttl_seconds`: how long one grant or renewal holds the lease (default 10). A dead active process is
        /// replaced within about this long plus a second.
        public var leaseTTL: Duration = .seconds(10)
        /// `renew_every_seconds`: how often the active process renews (default 2). It gives up acting when no renewal
        /// has succeeded for `lease_ttl − 2 × renew_every`.
        public var renewEvery: Duration = .seconds(2)
        /// `instance_name`: this process's name in the lease and the logs (default: the host name and the process id);
        /// a random part is added, so a restarted process is a new owner.
        public var instanceName: String?

        /// How long a process that lost the lease gives its portals and component to stop before it exits anyway.
        public static let stepDownWatchdog: Duration = .seconds(3)
        /// How often the lease's machine is driven (``LeaseKeeper``'s tick): the step-down may start this late.
        public static let leaseTick: Duration = .milliseconds(200)

        public init() {}
    }

    /// `ha:` — `enabled`, `lease_ttl_seconds`, `renew_every_seconds`, `instance_name`.
    static func decodeHighAvailability(_ reader: inout ConfigReader) throws(ConfigError) -> HighAvailability {
        var ha = HighAvailability()
        ha.enabled = try reader.optionalBool("enabled") ?? false
        let ttl = try reader.optionalInt("lease_ttl_seconds") ?? 10
        let renew = try reader.optionalInt("renew_every_seconds") ?? 2
        // A holder that gives up steps down 2 × renew_every before the database frees the lease; its watchdog must
        // have ended it by then (3 s + a tick), or it could still be running when the standby takes over.
        let minimumRenew = Int(((HighAvailability.stepDownWatchdog + HighAvailability.leaseTick) / 2)
            .components.seconds) + 1
        guard renew >= minimumRenew, renew <= 3600 else {
            throw reader.invalid("renew_every_seconds", "must be between \(minimumRenew) and 3600 (2 × renew_every_seconds "
                                 + "must exceed the \(HighAvailability.stepDownWatchdog) a lost holder takes to stop)")
        }
        // The holder gives up at ttl − 2 × renew after its last renewal; leave room for at least one retry before that.
        guard ttl > 3 * renew, ttl <= 3600 else {
            throw reader.invalid("lease_ttl_seconds", "must be more than 3 × renew_every_seconds (\(3 * renew)) and at most 3600")
        }
        ha.leaseTTL = .seconds(ttl)
        ha.renewEvery = .seconds(renew)
        if let name = try reader.optionalString("instance_name") {
            guard !name.isEmpty, name.utf8.count <= 100, name.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f }) else {
                throw reader.invalid("instance_name", "must be 1–100 printable ASCII characters without spaces")
            }
            ha.instanceName = name
        }
        return ha
    }
}
