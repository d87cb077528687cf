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
