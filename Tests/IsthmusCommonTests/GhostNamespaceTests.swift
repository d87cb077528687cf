import IsthmusCommon
import Testing

/// The ghost-id mapping: valid localparts for any identity, round trips for the short form, recognition.
@Suite struct GhostNamespaceTests {
    let namespace = GhostNamespace(prefix: "_xmpp_", serverName: "localhost", botLocalpart: "isthmus")!

    static let oddIdentities = [
        "alice@example.org", "Alice@Example.ORG", "alice@example.org/Phone", "room@conference.example.org/Nick Name",
        "juliet@example.com/balcony/with/slashes", "ünïcødé@exämple.org", "日本語@例え.jp/端末", "emoji🙂@example.org",
        "under_score@example.org", "equals=sign@example.org", "plus+tag@example.org", "a%20b@example.org", "",
        "room@muc.example.org\u{0}occupant-key", "@:#!$&'()*+,;=", "CAPS_AND__DOUBLE__UNDERSCORES", "trailing_",
        "tab\there", "new\nline", String(repeating: "x", count: 180) + "@example.org",
    ]

    @Test(arguments: oddIdentities)
    func shortFormRoundTripsAndIsAValidLocalpart(identity: String) {
        let user = namespace.userID(for: identity)
        #expect(user.rawValue.utf8.count <= 255)
        #expect(user.server == "localhost")
        #expect(user.localpart.hasPrefix("_xmpp_"))
        #expect(user.localpart.allSatisfy { "abcdefghijklmnopqrstuvwxyz0123456789._=-/".contains($0) }, "\(user)")
        #expect(namespace.identity(of: user) == identity || identity.isEmpty)
        #expect(namespace.isGhost(user) || identity.isEmpty)
        #expect(!namespace.isBot(user))
    }

    @Test func readableEscaping() {
        #expect(GhostLocalpartCodec.encode("Alice@Example.org/Ph") == "_alice=40_example.org/_ph")
        #expect(GhostLocalpartCodec.encode("a_b=c+d") == "a__b=3dc=2bd")
        #expect(GhostLocalpartCodec.encode("é") == "=c3=a9")
        #expect(namespace.userID(for: "alice@example.org").rawValue == "@_xmpp_alice=40example.org:localhost")
    }

    @Test func decodingRejectsNonCanonicalForms() {
        for localpart in ["=41", "=zz", "=4", "_", "_1", "a=2", "A", "=5f", "=61", "a b", "=ff"] {
            #expect(GhostLocalpartCodec.decode(localpart) == nil, "\(localpart)")
        }
        #expect(GhostLocalpartCodec.decode("=c3=a9") == "é")
    }

    @Test func longIdentitiesGetTheHashedFormWithinTheLimit() {
        let long = String(repeating: "Ü", count: 400) + "@example.org"
        let other = String(repeating: "Ü", count: 400) + "@example.net"
        let user = namespace.userID(for: long)
        #expect(user.rawValue.utf8.count <= 255)
        #expect(user.localpart.contains("=="))
        #expect(user.localpart.allSatisfy { "abcdefghijklmnopqrstuvwxyz0123456789._=-/".contains($0) })
        #expect(namespace.userID(for: long) == user, "the long form must be stable")
        #expect(namespace.userID(for: other) != user)
        #expect(namespace.identity(of: user) == nil, "the long form is not reversible")
        #expect(namespace.isGhost(user))
        let exact = String(repeating: "a", count: 255 - "@_xmpp_:localhost".utf8.count)
        #expect(namespace.identity(of: namespace.userID(for: exact)) == exact)
        #expect(namespace.userID(for: exact + "a").localpart.contains("=="))
    }

    @Test func recognisesOursOnly() {
        #expect(namespace.isOurs(UserID("@isthmus:localhost")!))
        #expect(namespace.isBot(UserID("@isthmus:localhost")!))
        #expect(!namespace.isGhost(UserID("@isthmus:localhost")!))
        #expect(!namespace.isOurs(UserID("@alice:localhost")!))
        #expect(!namespace.isOurs(UserID("@_xmpp_alice=40example.org:other.server")!))
        #expect(!namespace.isGhost(UserID("@_xmpp_:localhost")!))
        #expect(!namespace.isGhost(UserID("@_xmpp_BAD:localhost")!))
        #expect(!namespace.isGhost(UserID("@_xmpp_a==nothex:localhost")!))
        #expect(namespace.isGhost(UserID("@_xmpp_alice=40example.org:localhost")!))
    }

    @Test func invalidNamespacesAreRefused() {
        #expect(GhostNamespace(prefix: "", serverName: "localhost", botLocalpart: "bot") == nil)
        #expect(GhostNamespace(prefix: "UPPER", serverName: "localhost", botLocalpart: "bot") == nil)
        #expect(GhostNamespace(prefix: "_x_", serverName: String(repeating: "s", count: 230), botLocalpart: "bot") == nil)
    }

    @Test func derivedTransactionIDsAreStableAndDistinct() {
        let a = ClientTransactionID.derived(fromSourceKey: "!room|stanza-1")
        #expect(a == ClientTransactionID.derived(fromSourceKey: "!room|stanza-1"))
        #expect(a != ClientTransactionID.derived(fromSourceKey: "!room|stanza-2"))
        #expect(a.rawValue.hasPrefix("isthmus.") && a.rawValue.utf8.count == 40)
    }
}
