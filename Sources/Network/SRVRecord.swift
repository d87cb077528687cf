/// One DNS SRV resource record (RFC 2782): a host and port where a domain offers a service. A value; no I/O.
public struct SRVRecord: Sendable, Hashable {
    /// Records of a lower priority are tried first.
    public var priority: UInt16
    /// Within one priority, the record's share of the picks (RFC 2782's weighted selection); 0 is picked first only rarely.
    public var weight: UInt16
    public var port: UInt16
    /// The host, without the trailing dot; `.` for the root, which as a set's only record says the service is
    /// decidedly not available at the domain.
    public var target: String

    public init(priority: UInt16, weight: UInt16, port: UInt16, target: String) {
        self.priority = priority
        self.weight = weight
        self.port = port
        self.target = target
    }

    /// The target is the root (`.`): a lone such record means "no such service here" (RFC 2782).
    public var targetIsRoot: Bool { target == "." }
}
