import IsthmusCommon
import MatrixCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Encrypted attachments on disk: a fetched file (an unlinked temporary file, see ``MediaImporter``) encrypted before
/// it is uploaded to the homeserver, or decrypted after it was downloaded from there, into a new unlinked temporary
/// file, 64 KiB at a time (memory stays bounded whatever the size). Runs on its own thread: a 50 MiB file is tens of
/// milliseconds of AES that must not hold a thread of the cooperative pool.
enum AttachmentFiles {
    /// The file at `descriptor` encrypted under fresh secrets: the new file's descriptor (to be closed by the caller),
    /// its size and the secrets; nil when it could not be read or written.
    static func encrypted(_ descriptor: Int32) async -> (descriptor: Int32, size: Int64, keys: AttachmentKeys)? {
        let cipher = AttachmentCipher.encrypting()
        guard let (output, size) = await transformed(descriptor, by: cipher) else { return nil }
        return (output, size, cipher.finishEncrypting())
    }

    /// The file at `descriptor` decrypted with `keys`: the new file's descriptor and size; nil when it could not be
    /// read or written, when the keys are malformed, or when the ciphertext is not the one the sender hashed (nothing
    /// of it is kept then).
    static func decrypted(_ descriptor: Int32, keys: AttachmentKeys) async -> (descriptor: Int32, size: Int64)? {
        guard let cipher = try? AttachmentCipher.decrypting(keys),
              let (output, size) = await transformed(descriptor, by: cipher) else { return nil }
        guard cipher.verify() else {
            close(output)
            return nil
        }
        return (output, size)
    }

    private static func transformed(_ descriptor: Int32, by cipher: AttachmentCipher) async -> (Int32, Int64)? {
        await withCheckedContinuation { (continuation: CheckedContinuation<(Int32, Int64)?, Never>) in
            do {
                try DedicatedThread.start(name: "isthmus-attachment") { continuation.resume(returning: copy(descriptor, through: cipher)) }
            } catch {
                continuation.resume(returning: nil)
            }
        }
    }

    /// Reads from offset 0 (`pread`: the descriptor's own offset may be anywhere) to the end.
    private static func copy(_ descriptor: Int32, through cipher: AttachmentCipher) -> (Int32, Int64)? {
        guard let output = MediaImporter.unlinkedTemporaryFile(prefix: "isthmus-attachment") else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var offset: Int64 = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { break }
            if count == 0 { return (output, offset) }
            let piece = buffer.withUnsafeBytes { cipher.update(UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
            guard writeAll(piece, to: output) else { break }
            offset += Int64(count)
        }
        close(output)
        return nil
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            written += count
        }
        return true
    }
}
