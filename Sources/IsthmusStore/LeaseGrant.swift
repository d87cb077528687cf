/// Who holds (or last held) the bridge lease: one `serve` process, named by its instance name plus a random part, so
/// a restarted process with the same name is a new owner. Validated: non-empty, at most 200 bytes.
public struct LeaseOwner: Sendable, Hashable, CustomStringConvertible, LosslessStringConvertible {
    public let description: String

    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 200 else { return nil }
        description = text
    }
}

/// A lease this process holds, as granted by ``Store/tryAcquireLease(owner:ttl:)``: the owner and the epoch the
/// database gave it. The epoch goes up whenever the lease changes hands (or is taken again after it lapsed), so a
/// grant older than the row's is stale even when the owner token matches.
public struct LeaseGrant: Sendable, Hashable, CustomStringConvertible {
    public let owner: LeaseOwner
    public let epoch: Int64
    /// Until when the database grants it, in the database's clock (milliseconds since 1970). Informational: the
    /// holder decides with its own monotonic clock, the fence with the database's.
    public let expiresMs: Int64

    public init(owner: LeaseOwner, epoch: Int64, expiresMs: Int64) {
        self.owner = owner
        self.epoch = epoch
        self.expiresMs = expiresMs
    }

    public var description: String { "\(owner)#\(epoch)" }
}

/// The lease row as it is now (`doctor`, the start-up log): who holds it, and for how long more by the database's clock.
public struct LeaseState: Sendable, Hashable {
    /// The last owner (nil: nobody ever took it).
    public let owner: LeaseOwner?
    public let epoch: Int64
    public let expiresMs: Int64
    /// The database's clock when the row was read.
    public let databaseNowMs: Int64

    public init(owner: LeaseOwner?, epoch: Int64, expiresMs: Int64, databaseNowMs: Int64) {
        self.owner = owner
        self.epoch = epoch
        self.expiresMs = expiresMs
        self.databaseNowMs = databaseNowMs
    }

    /// Whether someone holds it now (it has an owner and has not expired).
    public var isHeld: Bool { owner != nil && expiresMs > databaseNowMs }
    /// How long it stays held unless renewed (zero when free).
    public var remaining: Duration { isHeld ? .milliseconds(expiresMs - databaseNowMs) : .zero }
}

/// A write refused by the fence: this store was fenced with `grant` (``Store/fence(with:)``), and the lease row no
/// longer names that owner and epoch, or it has expired. The transaction was rolled back; nothing was written.
/// The process must stop acting as the active instance.
public struct LeaseLostError: Error, Sendable, CustomStringConvertible {
    public let grant: LeaseGrant
    public var description: String { "the bridge lease \(grant) is no longer held; write refused" }
}
