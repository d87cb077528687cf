#if canImport(Glibc)
import Glibc
#endif

/// Gives memory that is free in the C heap back to the system (glibc `malloc_trim`), on Linux. Thread-safe; costs
/// a walk of the heap (about a millisecond for 100 MB).
///
/// Why: glibc keeps pages freed in the middle of its heaps resident. After a burst (1,000 rooms joining at start,
/// thousands of ghosts set up) a long-running service would otherwise keep its peak as its resident size.
public enum MemoryTrim {
    /// Releases free heap memory now. Returns whether any was released.
    @discardableResult
    public static func releaseFreeMemory() -> Bool {
        guard let trim = mallocTrim else { return false }
        return trim(0) != 0
    }

    /// Lets each of glibc's heaps keep up to `keep` bytes of freed memory at its top instead of giving it back on
    /// every `free` that leaves more than 128 KiB there (`mallopt(M_TRIM_THRESHOLD)`), and serves requests below
    /// `mmapAbove` from the heaps rather than from a mapping of their own (`M_MMAP_THRESHOLD`). Call once, at start.
    ///
    /// Why (issue 26): a thread that allocates and frees a batch's worth of memory — the store's thread committing a
    /// group, a portal draining a transaction's events — crossed the default threshold on most batches. Each crossing
    /// was an `madvise(MADV_DONTNEED)` on the thread's arena, which flushes the other cores' TLBs by interrupt, and then
    /// page faults to take the memory back: a tenth of the bridge's CPU between Matrix and XMPP in the profile.
    /// ``releaseFreeMemory()``, which the service calls every few seconds, still returns what is free.
    public static func keepFreedMemory(upTo keep: Int = 16 << 20, mmapAbove: Int = 4 << 20) {
        #if canImport(Glibc)
        guard let symbol = dlsym(nil, "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        // <malloc.h>: M_TRIM_THRESHOLD -1, M_MMAP_THRESHOLD -3.
        _ = mallopt(-1, Int32(clamping: keep))
        _ = mallopt(-3, Int32(clamping: mmapAbove))
        #endif
    }

    /// `malloc_trim`, looked up once (`<malloc.h>` is not part of the Glibc module); nil where there is none.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
        return nil
        #endif
    }()
}
