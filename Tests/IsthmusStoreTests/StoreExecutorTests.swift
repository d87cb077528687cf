#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials
import Foundation
import IsthmusCommon
@testable import IsthmusStore
import Testing

/// The store's work runs on its own thread (``StoreExecutor``), never on the caller's cooperative-pool thread.
@Suite struct StoreExecutorTests {
    @Test func everyCallRunsOnTheStoresOwnNamedThread() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        let caller = (thread: pthread_self(), name: DedicatedThread.currentThreadName())
        let read = try await store.read { _ in (thread: pthread_self(), name: DedicatedThread.currentThreadName()) }
        let write = try await store.write { _ in pthread_self() }
        #expect(read.name == "isthmus-store")
        #expect(caller.name != "isthmus-store")
        #expect(pthread_equal(read.thread, caller.thread) == 0)
        #expect(pthread_equal(read.thread, write) != 0)
    }

    @Test func concurrentCallersAllReachTheSameThreadAndTwoStoresHaveTwoThreads() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        let other = try Store(path: ":memory:", logger: .disabled)
        let threads = try await withThrowingTaskGroup(of: pthread_t.self) { group in
            for _ in 0..<32 { group.addTask { try await store.read { _ in pthread_self() } } }
            return try await group.reduce(into: Set<pthread_t>()) { $0.insert($1) }
        }
        #expect(threads.count == 1)
        let otherThread = try await other.read { _ in pthread_self() }
        #expect(threads.first.map { pthread_equal($0, otherThread) == 0 } == true)
    }

    @Test func aStoreStillAnswersAfterManyStoresCameAndWent() async throws {
        // Each store's thread ends after the store is gone; opening and dropping many must neither leak nor crash.
        for index in 0..<50 {
            let store = try Store(path: ":memory:", logger: .disabled)
            try await store.markTransactionProcessed(TransactionID("t\(index)")!)
            #expect(try await store.isTransactionProcessed(TransactionID("t\(index)")!))
        }
    }

    @Test func closeRunsQueuedWorkThenEndsTheStoresThread() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("isthmus-close-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try Store(path: path, logger: .disabled)
        // "/proc/thread-self" links to "<pid>/task/<tid>" of the thread that reads it.
        let thread = try await store.read { _ in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"))?.split(separator: "/").last.map(String.init) ?? "?"
        }
        #expect(Int(thread) != nil)
        try await store.markTransactionProcessed(TransactionID("before-close")!)
        await store.close()
        // The thread ends right after its last job; wait for the kernel to drop it (bounded, no fixed sleep).
        let deadline = ContinuousClock.now + .seconds(5)
        while FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)") && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(!FileManager.default.fileExists(atPath: "/proc/self/task/\(thread)"))
        let reopened = try Store(path: path, logger: .disabled)
        #expect(try await reopened.isTransactionProcessed(TransactionID("before-close")!))
    }
}
