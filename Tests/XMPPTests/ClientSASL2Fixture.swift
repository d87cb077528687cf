import Foundation
import IsthmusCommon
import TestSupport
import XMLStream
import XMPP

/// What the SASL2 machine tests share: the account (`user`, password `pencil`, the RFC 5802/7677 examples' values),
/// a TLS channel with known binding data, the server's features and elements written as literal XML.
enum ClientSASL2Fixture {
    typealias Machine = ClientStateMachine

    static let userAgent = SASL2UserAgent(id: "d4ac9e2d-2a6b-4f2e-9c58-1a0e3f5b7c11", device: "relay-host")
    static let configuration = Machine.Configuration(
        domain: "example.com", username: "user", credential: .password("pencil"), resource: "isthmus",
        pingInterval: .seconds(30), pingTimeout: .seconds(10), handshakeTimeout: .seconds(20), userAgent: userAgent)
    /// tls-exporter data: 32 × 7; tls-server-end-point data: 32 × 9.
    static let tls = Machine.TLS(channel: SASLChoice.Channel(exporterUsable: true),
                                 bindingData: [.tlsExporter: Array(repeating: 7, count: 32), .tlsServerEndPoint: Array(repeating: 9, count: 32)])
    static let serverHeader = StreamHeader(
        name: "stream", namespace: XMPPNamespace.streams, contentNamespace: XMPPNamespace.client,
        attributes: ["id": "s1", "from": "example.com"])
    /// The full JID Bind2 binds (Prosody: the tag and a hash of the user-agent id).
    static let bound = JID("user@example.com/Isthmus~3pNwn3HYTMGl")!
    static let userAgentXML = """
        <user-agent id='d4ac9e2d-2a6b-4f2e-9c58-1a0e3f5b7c11'><software>Isthmus</software><device>relay-host</device></user-agent>
        """

    /// RFC 5802 §5 (SCRAM-SHA-1).
    static let sha1Nonce = "fyko+d2lbbFgONRv9qkxdawL"
    static let sha1ServerFirst = "r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096"
    static let sha1ClientFinal = "c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts="
    static let sha1ServerFinal = "v=rmF9pqV8S7suAoZWja4dJRkFsKQ="
    /// RFC 7677 §3 (SCRAM-SHA-256).
    static let sha256Nonce = "rOprNGfwEbeRWgbNEkqO"
    static let sha256ServerFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    static let sha256ClientFinal = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    static let sha256ServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="

    static func b64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    static func event(_ xml: String) -> XMLStreamEvent { .element(TestXML.element(xml)) }

    /// `<stream:features>` with SASL2's `<authentication>` (its `inline` as given) and XEP-0440's list. By default
    /// SCRAM-SHA-1-PLUS and SCRAM-SHA-1 with only `tls-unique` announced (which the bridge cannot compute): unbound
    /// SCRAM-SHA-1 with `n,,`, so RFC 5802's example applies byte for byte.
    static func features(_ mechanisms: [String] = ["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], inline: String = "",
                         bindings: [String]? = ["tls-unique"]) -> XMLStreamEvent {
        let list = mechanisms.map { "<mechanism>\($0)</mechanism>" }.joined()
        let announced = bindings.map { types in
            "<sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'>" + types.map { "<channel-binding type='\($0)'/>" }.joined()
                + "</sasl-channel-binding>"
        } ?? ""
        return event("<stream:features><authentication xmlns='urn:xmpp:sasl:2'>\(list)<inline>\(inline)</inline></authentication>"
                     + announced + "</stream:features>")
    }

    /// Bind2 with XEP-0198 inside it, XEP-0198 resumption inline (what trunk Prosody with mod_sasl2_sm offers).
    static let inlineEverything = """
        <sm xmlns='urn:xmpp:sm:3'/><bind xmlns='urn:xmpp:bind:0'><inline><feature var='urn:xmpp:sm:3'/></inline></bind>
        """
    /// Bind2 alone (Prosody 0.12.3 with mod_sasl2 and mod_sasl2_bind2).
    static let bind2Only = "<bind xmlns='urn:xmpp:bind:0'><inline><feature var='urn:xmpp:csi:0'/></inline></bind>"

    /// The `<authenticate>` we expect, as literal XML: `inside` follows the user agent.
    static func authenticate(_ mechanism: String, _ initialResponse: String, inside: String = "") -> Machine.Action {
        .sendElement(TestXML.element("""
            <authenticate xmlns='urn:xmpp:sasl:2' mechanism='\(mechanism)'><initial-response>\(initialResponse)</initial-response>\
            \(userAgentXML)\(inside)</authenticate>
            """))
    }

    static func sasl2(_ name: String, _ text: String) -> XMLStreamEvent {
        event("<\(name) xmlns='urn:xmpp:sasl:2'>\(b64(text))</\(name)>")
    }

    static func response(_ text: String) -> Machine.Action {
        .sendElement(XElement("response", namespace: XMPPNamespace.sasl2, children: [.text(b64(text))]))
    }

    /// SASL2's `<success>` with SCRAM-SHA-1's server-final, the identifier, and `more` inside.
    static func success(_ identifier: String = "user@example.com", more: String = "", serverFinal: String = sha1ServerFinal) -> XMLStreamEvent {
        event("""
            <success xmlns='urn:xmpp:sasl:2'><additional-data>\(b64(serverFinal))</additional-data>\
            <authorization-identifier>\(identifier)</authorization-identifier>\(more)</success>
            """)
    }

    /// RFC 5802's salted password (what SCRAM-SHA-1 with `pencil` yields).
    static var sha1Salted: SCRAMClient.SaltedPassword {
        let salt = Array(Data(base64Encoded: "QSXCR+Q6sek8bf92")!)
        return SCRAMClient.SaltedPassword(hash: .sha1, salt: salt, iterations: 4096,
                                          bytes: Digest.pbkdf2(password: Array("pencil".utf8), salt: salt, iterations: 4096, hash: .sha1))
    }

    static func message(_ n: Int) -> Stanza {
        .message(Message(type: .groupchat, to: JID("room@conference.example.com"), id: StanzaAttributeID("m\(n)"), body: "hi \(n)"))
    }

    /// A kept session that handled 7 of the server's stanzas and had 1 of ours acknowledged.
    static func kept(unacknowledged: [Stanza]) -> Machine.Resumption {
        Machine.Resumption(streamManagement: StreamManagement(sessionID: "sm-1", location: nil, inboundHandled: 7,
                                                              outboundAcknowledged: 1, unacknowledged: unacknowledged),
                           jid: bound)
    }

    /// A machine inside TLS whose header the server answered: the next event is the features.
    static func opened(_ configuration: Machine.Configuration = configuration, resuming: Machine.Resumption? = nil,
                       credentials: CredentialCache = CredentialCache(), nonce: String = sha1Nonce,
                       now: ContinuousClock.Instant) -> Machine {
        var machine = Machine(configuration: configuration, resuming: resuming, credentials: credentials, nonce: nonce)
        _ = machine.connectionOpened(now: now, directTLS: tls)
        _ = machine.received(.streamStart(serverHeader), now: now)
        return machine
    }
}
