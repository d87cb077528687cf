#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Unbuffered writes to the process's standard output and error, and reading its standard input (no `FILE*` globals,
/// so safe from any thread).
public enum StandardStreams {
    /// Writes `text` to stdout, retrying short writes.
    public static func writeOutput(_ text: String) { write(all: text, to: STDOUT_FILENO) }
    /// Writes `text` to stderr, retrying short writes.
    public static func writeError(_ text: String) { write(all: text, to: STDERR_FILENO) }

    /// Reads standard input to its end (blocking the calling thread), as UTF-8; nil when it cannot be read.
    public static func readAllInput() -> String? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                #if canImport(Glibc)
                Glibc.read(STDIN_FILENO, raw.baseAddress, raw.count)
                #else
                Darwin.read(STDIN_FILENO, raw.baseAddress, raw.count)
                #endif
            }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return String(decoding: bytes, as: UTF8.self) }
            bytes += buffer[..<count]
        }
    }

    /// Writes all of `text` to `descriptor`, retrying short writes and interruptions.
    public static func write(all text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { raw in
                #if canImport(Glibc)
                Glibc.write(descriptor, raw.baseAddress, raw.count)
                #else
                Darwin.write(descriptor, raw.baseAddress, raw.count)
                #endif
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            bytes = bytes.dropFirst(written)
        }
    }
}
