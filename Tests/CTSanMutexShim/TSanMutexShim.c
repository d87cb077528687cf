// Makes Synchronization.Mutex visible to ThreadSanitizer. Linked into the test binary only in
// `scripts/sanitize thread` builds (Package.swift adds this target when ISTHMUS_SANITIZE=thread).
//
// Why: on Linux, Mutex's fast paths (an acquiring / releasing compare-exchange on the lock word) are inlined
// into our instrumented code, but under contention it falls back to `_lockSlow` / `_unlockSlow` /
// `_tryLockSlow` in libswiftSynchronization.so, which take and hand over the lock with FUTEX_LOCK_PI /
// FUTEX_UNLOCK_PI in the kernel. That library is not instrumented and TSan has no futex interceptor, so a
// contended hand-over has no happens-before edge and TSan reports every access under the lock as a race
// (reproduced with 8 tasks incrementing one Mutex<Int>: a "Swift access race" each run; none with this shim).
//
// How: this object defines the three slow-path symbols, so the static link binds our modules' calls to them
// (a definition in an object file wins over the shared library's); each calls the library's own function
// (dlsym RTLD_NEXT) and tells TSan about the acquire / release on the lock word's address, exactly what a
// pthread mutex interceptor would do. The Swift methods take `self` (the lock word, borrowed, so by address)
// in the swiftself register, which clang's swiftcall + swift_context express.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void __tsan_acquire(void *addr);
void __tsan_release(void *addr);

#define SWIFTCALL __attribute__((swiftcall))
#define SELF __attribute__((swift_context))

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"

typedef SWIFTCALL void (*LockSlow)(uint32_t, void *SELF);
typedef SWIFTCALL void (*UnlockSlow)(void *SELF);
typedef SWIFTCALL bool (*TryLockSlow)(void *SELF);

static LockSlow realLockSlow;
static UnlockSlow realUnlockSlow;
static TryLockSlow realTryLockSlow;

static void *real(const char *name) {
    void *function = dlsym(RTLD_NEXT, name);
    if (!function) {
        fprintf(stderr, "TSanMutexShim: %s not found in libswiftSynchronization\n", name);
        abort();
    }
    return function;
}

// Resolved once at load time, before any thread exists (a lazy lookup would itself race).
__attribute__((constructor)) static void resolve(void) {
    realLockSlow = (LockSlow)real(LOCK_SLOW);
    realUnlockSlow = (UnlockSlow)real(UNLOCK_SLOW);
    realTryLockSlow = (TryLockSlow)real(TRY_LOCK_SLOW);
}

SWIFTCALL void isthmus_tsan_lockSlow(uint32_t selfID, void *SELF handle) __asm__(LOCK_SLOW);
SWIFTCALL void isthmus_tsan_lockSlow(uint32_t selfID, void *SELF handle) {
    realLockSlow(selfID, handle);
    __tsan_acquire(handle);
}

SWIFTCALL void isthmus_tsan_unlockSlow(void *SELF handle) __asm__(UNLOCK_SLOW);
SWIFTCALL void isthmus_tsan_unlockSlow(void *SELF handle) {
    __tsan_release(handle);
    realUnlockSlow(handle);
}

SWIFTCALL bool isthmus_tsan_tryLockSlow(void *SELF handle) __asm__(TRY_LOCK_SLOW);
SWIFTCALL bool isthmus_tsan_tryLockSlow(void *SELF handle) {
    bool locked = realTryLockSlow(handle);
    if (locked) __tsan_acquire(handle);
    return locked;
}
