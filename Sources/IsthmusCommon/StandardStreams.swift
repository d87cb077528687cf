#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Unbuffered writes to the process's standard output and error (no `FILE*` globals, so safe from any thread).
public enum StandardStreams {
    /// Writes `text` to stdout, retrying short writes.
    public static func writeOutput(_ text: String) { write(all: text, to: STDOUT_FILENO) }
    /// Writes `text` to stderr, retrying short writes.
    public static func writeError(_ text: String) { write(all: text, to: STDERR_FILENO) }

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
