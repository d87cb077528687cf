/// How hard the store pushes each commit to the disk: SQLite's `PRAGMA synchronous` in WAL mode
/// (https://www.sqlite.org/pragma.html#pragma_synchronous). Chosen by `database.synchronous`.
public enum StoreSynchronous: String, Sendable, Equatable {
    /// WAL + NORMAL: a commit survives a crash of the process (kill -9); on power loss or an OS crash the last
    /// commits before the next checkpoint may be rolled back (the database stays consistent).
    case normal
    /// WAL + FULL: the log is synced at every commit, so a commit also survives power loss, at a cost per commit.
    case full

    /// The pragma's value.
    var pragmaValue: String { self == .full ? "FULL" : "NORMAL" }
}
