import Foundation

/// A fresh folder under the system temporary directory, removed when the value is released. Does file I/O.
///
/// Each instance has a unique name, so tests running in parallel never share files.
public final class TemporaryDirectory: Sendable {
    /// The folder's absolute URL.
    public let url: URL

    /// Creates the folder (name: `isthmus-test-<random>`).
    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("isthmus-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The folder's absolute path.
    public var path: String { url.path }

    /// The absolute path of `name` inside the folder (nothing is created).
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `text` as UTF-8 to `name` inside the folder (creating intermediate folders); returns its absolute path.
    @discardableResult
    public func write(_ text: String, to name: String) throws -> String {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
        return file.path
    }
}
