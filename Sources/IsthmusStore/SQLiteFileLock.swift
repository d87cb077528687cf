#if canImport(Glibc)
import Glibc
#endif

/// Whether another process has a SQLite database open, read from the locks SQLite's unix VFS holds — so
/// `migrate-store` can refuse to copy a file `serve` is still writing. Reads locks only; does file I/O.
///
/// In WAL mode (which the store always uses) every connection holds a shared POSIX lock on one byte of the `-shm`
/// file for as long as it is open: the "dead man switch" byte `UNIX_SHM_DMS` of SQLite's `os_unix.c`, offset
/// 120 + 8 = 128 (`(22 + SQLITE_SHM_NLOCK) * 4 + SQLITE_SHM_NLOCK`). Asking the kernel whether an exclusive lock on
/// that byte could be taken (`F_GETLK`) names a process holding it. SQLite has no API for "who else has this file
/// open", hence this. POSIX locks of the calling process never conflict with its own, so call it before opening the
/// file here.
enum SQLiteFileLock {
    /// The offset of the dead-man-switch byte in the `-shm` file.
    static let deadManSwitchOffset: Int = 128

    /// The id of a process that has the database at `path` open, or nil when none has (or the file has no `-shm`:
    /// nobody opened it in WAL mode since it was last closed cleanly).
    static func otherProcess(path: String) -> Int32? {
        let descriptor = open(path + "-shm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(deadManSwitchOffset)
        lock.l_len = 1
        guard fcntl(descriptor, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK) else { return nil }
        return lock.l_pid
    }
}
