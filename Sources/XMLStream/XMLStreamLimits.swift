/// Bounds the parser enforces on input from the peer.
public struct XMLStreamLimits: Sendable, Hashable {
    /// The largest stanza in bytes (from the end of the previous stanza to the end of this one). Default 256 KiB.
    public var maxStanzaBytes: Int
    /// The deepest element nesting counted from the stream root (the root is depth 0, stanzas depth 1). Default 64.
    public var maxDepth: Int

    public init(maxStanzaBytes: Int = 256 * 1024, maxDepth: Int = 64) {
        self.maxStanzaBytes = maxStanzaBytes
        self.maxDepth = maxDepth
    }

    /// 256 KiB stanzas, depth 64.
    public static let `default` = XMLStreamLimits()
}
