import Foundation
import TestSupport
import Testing

/// `isthmus.doap` (XEP-0453) against the code: every namespace the sources use maps to a specification the DOAP
/// lists, and every XEP the DOAP lists is reached by a namespace the sources use (or is in `xepsWithoutNamespace`).
/// Pure file reading: no sockets.
@Suite struct DOAPTests {
    /// The specification each namespace of `XMPPNamespace` belongs to. A namespace added to `XMPPNamespace.swift`
    /// without a row here fails `everyDeclaredNamespaceHasASpecification`.
    static let specification: [String: Spec] = [
        "http://etherx.jabber.org/streams": .rfc(6120),
        "urn:ietf:params:xml:ns:xmpp-streams": .rfc(6120),
        "urn:ietf:params:xml:ns:xmpp-stanzas": .rfc(6120),
        "jabber:client": .rfc(6120),
        "jabber:server": .rfc(6120),
        "urn:ietf:params:xml:ns:xmpp-sasl": .rfc(6120),
        "urn:ietf:params:xml:ns:xmpp-bind": .rfc(6120),
        "urn:ietf:params:xml:ns:xmpp-tls": .rfc(6120),
        "urn:xmpp:sm:3": .xep(198),
        "urn:xmpp:sasl-cb:0": .xep(440),
        "urn:xmpp:sasl:2": .xep(388),
        "urn:xmpp:bind:0": .xep(386),
        "urn:xmpp:fast:0": .xep(484),
        "jabber:iq:roster": .rfc(6121),
        "jabber:x:conference": .xep(249),
        "jabber:component:accept": .xep(114),
        "http://jabber.org/protocol/disco#info": .xep(30),
        "http://jabber.org/protocol/disco#items": .xep(30),
        "jabber:iq:search": .xep(55),
        "urn:xmpp:ping": .xep(199),
        "jabber:x:data": .xep(4),
        "http://jabber.org/protocol/muc": .xep(45),
        "http://jabber.org/protocol/muc#user": .xep(45),
        "http://jabber.org/protocol/muc#owner": .xep(45),
        "http://jabber.org/protocol/muc#admin": .xep(45),
        "http://jabber.org/protocol/muc#roomconfig": .xep(45),
        "http://jabber.org/protocol/muc#roominfo": .xep(45),
        "http://jabber.org/protocol/muc#stable_id": .xep(45),
        "http://jabber.org/protocol/muc#self-ping-optimization": .xep(410),
        "urn:xmpp:occupant-id:0": .xep(421),
        "urn:xmpp:sid:0": .xep(359),
        "urn:xmpp:delay": .xep(203),
        "urn:xmpp:mam:2": .xep(313),
        "urn:xmpp:mam:2#extended": .xep(313),
        "http://jabber.org/protocol/rsm": .xep(59),
        "urn:xmpp:forward:0": .xep(297),
        "urn:xmpp:message-correct:0": .xep(308),
        "urn:xmpp:message-retract:1": .xep(424),
        "urn:xmpp:message-retract:0": .xep(424),
        "urn:xmpp:fasten:0": .xep(422),
        "urn:xmpp:message-moderate:1": .xep(425),
        "urn:xmpp:message-moderate:0": .xep(425),
        "urn:xmpp:hints": .xep(334),
        "urn:xmpp:styling:0": .xep(393),
        "urn:xmpp:reactions:0": .xep(444),
        "urn:xmpp:reply:0": .xep(461),
        "urn:xmpp:fallback:0": .xep(428),
        "http://jabber.org/protocol/chatstates": .xep(85),
        "urn:xmpp:chat-markers:0": .xep(333),
        "jabber:x:oob": .xep(66),
        "urn:xmpp:sfs:0": .xep(447),
        "urn:xmpp:file:metadata:0": .xep(446),
        "http://jabber.org/protocol/url-data": .xep(103),
        "urn:xmpp:http:upload:0": .xep(363),
        "vcard-temp:x:update": .xep(153),
        "vcard-temp": .xep(54),
        "http://jabber.org/protocol/xhtml-im": .xep(71),
    ]

    /// XEPs the bridge implements that have no namespace of their own, and where the code implements them.
    static let xepsWithoutNamespace: [Int: String] = [
        106: "Sources/Bridge/Runtime/BridgeNaming.swift (JID escaping)",
        368: "Sources/XMPPClient/ServerCandidates.swift (SRV records for direct TLS, found through DNS)",
        393: "Sources/MessageFormatting (message styling)",
        410: "Sources/XMPP/MUC/SelfPingOutcome.swift (self-ping uses urn:xmpp:ping)",
        474: "Sources/XMPP/Client/SCRAM.swift (SCRAM downgrade protection, inside SASL)",
    ]

    @Test func everyDeclaredNamespaceHasASpecification() throws {
        let declared = try DOAPCheck.declaredNamespaces(source: Self.read("Sources/XMPP/XMPPNamespace.swift"))
        #expect(declared.count > 30)
        for (name, namespace) in declared.sorted(by: { $0.key < $1.key }) {
            #expect(Self.specification[namespace] != nil, "XMPPNamespace.\(name) (\(namespace)) has no row in DOAPTests.specification")
        }
    }

    @Test func everyUsedNamespaceIsInTheDOAP() throws {
        let missing = try DOAPCheck.missingFromDOAP(
            used: Self.usedSpecifications(), doap: Self.read("isthmus.doap"))
        #expect(missing.isEmpty, "used by the code but not in isthmus.doap: \(missing)")
    }

    @Test func everyXEPInTheDOAPIsUsed() throws {
        let used = try Self.usedSpecifications().union(Self.xepsWithoutNamespace.keys.map(Spec.xep))
        let listed = DOAPCheck.listedXEPs(doap: try Self.read("isthmus.doap"))
        let unused = listed.filter { !used.contains(.xep($0)) }.sorted()
        #expect(unused.isEmpty, "in isthmus.doap but reached by no namespace the code uses: \(unused)")
    }

    @Test func everyEntryHasAVersionAndAStatusAndPartialOnesANote() throws {
        let entries = DOAPCheck.entries(doap: try Self.read("isthmus.doap"))
        #expect(entries.count >= 10)
        for entry in entries {
            #expect(entry.contains("<xmpp:version>"), "no version: \(entry)")
            #expect(entry.contains("<xmpp:status>complete</xmpp:status>") || entry.contains("<xmpp:status>partial</xmpp:status>"),
                    "status is neither complete nor partial: \(entry)")
            if entry.contains("<xmpp:status>partial</xmpp:status>") {
                #expect(entry.contains("<xmpp:note"), "a partial entry without a note: \(entry)")
            }
        }
    }

    /// The check fails when a used namespace's XEP is missing from the DOAP (it can fail).
    @Test func aMissingEntryIsReported() throws {
        let doap = try Self.read("isthmus.doap").replacingOccurrences(of: "xep-0421.html", with: "xep-9999.html")
        #expect(DOAPCheck.missingFromDOAP(used: [.xep(421), .rfc(6120)], doap: doap) == [.xep(421)])
        #expect(DOAPCheck.missingFromDOAP(used: [.xep(421), .rfc(6120)], doap: try Self.read("isthmus.doap")).isEmpty)
    }

    /// The specifications of the namespaces referenced as `XMPPNamespace.name` in `Sources/` (the benchmarks' fakes excepted).
    static func usedSpecifications() throws -> Set<Spec> {
        let declared = try DOAPCheck.declaredNamespaces(source: read("Sources/XMPP/XMPPNamespace.swift"))
        var used = Set<Spec>()
        let sources = ConfigFixture.repositoryRoot.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        for file in files where file.hasSuffix(".swift") && !file.hasPrefix("IsthmusBenchmarks/")
            && file != "XMPP/XMPPNamespace.swift" {
            let text = try String(contentsOfFile: sources.appendingPathComponent(file).path, encoding: .utf8)
            for name in DOAPCheck.referencedNames(in: text) {
                if let namespace = declared[name], let spec = specification[namespace] { used.insert(spec) }
            }
        }
        return used
    }

    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: ConfigFixture.repositoryRoot.appendingPathComponent(path).path, encoding: .utf8)
    }
}

/// A specification a namespace belongs to.
enum Spec: Hashable, Comparable {
    case rfc(Int)
    case xep(Int)
}

/// Text-level readers of `XMPPNamespace.swift`, the sources and the DOAP (pure functions).
enum DOAPCheck {
    /// `name → namespace` for every `static let name = "…"` in `XMPPNamespace.swift`.
    static func declaredNamespaces(source: String) throws -> [String: String] {
        let pattern = try NSRegularExpression(pattern: #"static let (\w+) = "([^"]+)""#)
        var result: [String: String] = [:]
        for match in pattern.matches(in: source, range: NSRange(source.startIndex..., in: source)) {
            result[String(source[Range(match.range(at: 1), in: source)!])] = String(source[Range(match.range(at: 2), in: source)!])
        }
        return result
    }

    /// The `name`s of every `XMPPNamespace.name` in `text`.
    static func referencedNames(in text: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: #"XMPPNamespace\.(\w+)"#)
        return Set(pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
            String(text[Range($0.range(at: 1), in: text)!])
        })
    }

    /// The XEP numbers of the DOAP's `xmpp:SupportedXep` entries.
    static func listedXEPs(doap: String) -> Set<Int> {
        let pattern = try! NSRegularExpression(pattern: #"<xmpp:xep rdf:resource="https://xmpp\.org/extensions/xep-(\d{4})\.html"/>"#)
        return Set(pattern.matches(in: doap, range: NSRange(doap.startIndex..., in: doap)).compactMap {
            Int(doap[Range($0.range(at: 1), in: doap)!])
        })
    }

    /// The text of each `<xmpp:SupportedXep>…</xmpp:SupportedXep>` entry.
    static func entries(doap: String) -> [String] {
        doap.components(separatedBy: "<xmpp:SupportedXep>").dropFirst().map {
            $0.components(separatedBy: "</xmpp:SupportedXep>")[0]
        }
    }

    /// The specifications in `used` that the DOAP does not list.
    static func missingFromDOAP(used: Set<Spec>, doap: String) -> [Spec] {
        let listed = listedXEPs(doap: doap)
        return used.filter { spec in
            switch spec {
            case .rfc(let number): !doap.contains(#"<implements rdf:resource="https://www.rfc-editor.org/info/rfc\#(number)"/>"#)
            case .xep(let number): !listed.contains(number)
            }
        }.sorted()
    }
}
