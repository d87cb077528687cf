import IsthmusCommon
import IsthmusStore
import Media
import XMPP

/// XMPP files to Matrix: which messages share a file (RICH.md §6). The transfer itself is an effect
/// (``MatrixSend/media(_:fallback:txnID:)``, performed by ``MediaImporter``).
extension PortalStateMachine {
    /// The file `body` and `references` share: an OOB or SFS URL (the body is a caption when it is more than the URL
    /// and not marked as SFS's fallback), or a body that is one http(s) URL and nothing else. nil: not a file.
    /// `aesgcm://` links (OMEMO-encrypted files) are not: the bridge cannot read them. Pure.
    static func fileLink(body: String, references: MessageReferences) -> XMPPFileLink? {
        let trimmed = String(body.trimmedOfWhitespace)
        if let file = references.file, isHTTPURL(file.url) {
            let bodyIsFallback = trimmed == file.url
                || references.fallbackRanges(for: XMPPNamespace.fileSharing).map { $0 == nil } == true
            let caption = bodyIsFallback ? file.desc : (trimmed.isEmpty ? file.desc : trimmed)
            return XMPPFileLink(url: file.url, name: file.name, mediaType: file.mediaType, caption: caption, bare: false)
        }
        guard isHTTPURL(trimmed), !trimmed.contains(where: { $0.isWhitespace }) else { return nil }
        return XMPPFileLink(url: trimmed, name: nil, mediaType: nil, caption: nil, bare: true)
    }

    /// Whether `text` starts with `http://` or `https://` and has a host.
    static func isHTTPURL(_ text: String) -> Bool {
        let lower = text.prefix(8).lowercased()
        let rest = lower.hasPrefix("https://") ? text.dropFirst(8) : lower.hasPrefix("http://") ? text.dropFirst(7) : nil
        guard let rest, let first = rest.first, first != "/" else { return false }
        return text.utf8.count <= 4096
    }
}
