import IsthmusCommon
import Testing

/// Inputs the identifier fuzz harness (Fuzz/fuzz-identifiers) found, kept as regressions.
@Suite struct GhostNamespaceFuzzRegressionTests {
    /// A long identity made of multi-byte characters: the hashed form's readable head is cut at a byte budget, here
    /// inside a character's three `=xx` escapes. The ghost must still be recognised as ours (else its messages
    /// would be bridged back as a stranger's), and its identity is not recoverable from the id.
    @Test func aLongFormGhostWhoseHeadEndsInsideACharacterIsOurs() {
        let namespace = GhostNamespace(prefix: "_xmpp_", serverName: "example.org", botLocalpart: "isthmus")!
        let identity = "@a_b=c/d.e-f:[::1]:" + String(repeating: "\u{FFFD}", count: 23) + "8448"
        let ghost = namespace.userID(for: identity)
        #expect(ghost.rawValue.utf8.count <= 255)
        #expect(ghost.localpart.contains("=ef=="), "the head ends inside U+FFFD (EF BF BD): \(ghost)")
        #expect(namespace.isGhost(ghost))
        #expect(namespace.isOurs(ghost))
        #expect(namespace.identity(of: ghost) == nil)
    }

    /// Every cut of a long identity of multi-byte characters gives a ghost recognised as ours.
    @Test(arguments: ["é", "日", "🙂"])
    func everyCutOfMultiByteCharactersIsRecognised(character: String) {
        let namespace = GhostNamespace(prefix: "_xmpp_", serverName: "example.org", botLocalpart: "isthmus")!
        for padding in 0..<8 {
            let identity = String(repeating: "a", count: padding) + String(repeating: character, count: 90)
            let ghost = namespace.userID(for: identity)
            #expect(ghost.rawValue.utf8.count <= 255)
            #expect(namespace.isGhost(ghost), "\(ghost)")
        }
    }

    @Test func bytesDecodeWithoutUTF8AndCanonicalFormsStillRequired() {
        #expect(GhostLocalpartCodec.decodeBytes("a=ef") == [0x61, 0xEF])
        #expect(GhostLocalpartCodec.decode("a=ef") == nil)
        #expect(GhostLocalpartCodec.decodeBytes("=61") == nil)   // `a` must stay literal
        #expect(GhostLocalpartCodec.decodeBytes("=EF") == nil)   // hex digits are lower case
    }
}
