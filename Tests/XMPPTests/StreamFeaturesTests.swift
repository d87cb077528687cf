import TestSupport
import Testing
import XMLStream
import XMPP

/// A client stream's features read into types, and the SASL mechanism chosen from them.
@Suite struct StreamFeaturesTests {
    func features(_ inner: String) throws -> StreamFeatures {
        try StreamFeatures(element: TestXML.element("<stream:features xmlns:stream='http://etherx.jabber.org/streams'>\(inner)</stream:features>"))
    }

    func names(_ names: String...) -> [SASLMechanismName] { names.map { SASLMechanismName($0)! } }

    @Test func prosodysFeaturesBeforeAndAfterTLSAndAfterAuthentication() throws {
        let beforeTLS = try features("<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls>")
        #expect(beforeTLS.startTLS == .init(required: true) && beforeTLS.mechanisms.isEmpty && !beforeTLS.bind)

        let afterTLS = try features("""
            <mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>SCRAM-SHA-1-PLUS</mechanism>\
            <mechanism> SCRAM-SHA-1 </mechanism><mechanism>PLAIN</mechanism><mechanism>not a name</mechanism></mechanisms>\
            <sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'><channel-binding type='tls-server-end-point'/>\
            <channel-binding type='tls-exporter'/><channel-binding type='tls-unique'/></sasl-channel-binding>
            """)
        #expect(afterTLS.startTLS == nil)
        #expect(afterTLS.mechanisms == names("SCRAM-SHA-1-PLUS", "SCRAM-SHA-1", "PLAIN"), "an invalid name is left out")
        #expect(afterTLS.channelBindings == [.tlsServerEndPoint, .tlsExporter], "tls-unique is not one the bridge computes")
        #expect(afterTLS.offer == SASLOffer(mechanisms: ["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1", "PLAIN", "not a name"],
                                            channelBindingTypes: ["tls-server-end-point", "tls-exporter", "tls-unique"]),
                "XEP-0474 hashes what was advertised, unknown names included")

        let authenticated = try features("<bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/><sm xmlns='urn:xmpp:sm:3'/><ver xmlns='urn:xmpp:features:rosterver'/>")
        #expect(authenticated.bind && authenticated.streamManagement && authenticated.sasl2 == nil && authenticated.channelBindings == nil)
    }

    @Test func sasl2WithItsInlineFeatures() throws {
        let offer = try features("""
            <authentication xmlns='urn:xmpp:sasl:2'><mechanism>SCRAM-SHA-256</mechanism><mechanism>SCRAM-SHA-256-PLUS</mechanism>\
            <mechanism>X-UNKNOWN NAME</mechanism><inline><sm xmlns='urn:xmpp:sm:3'/>\
            <bind xmlns='urn:xmpp:bind:0'><inline><feature var='urn:xmpp:carbons:2'/><feature var='urn:xmpp:sm:3'/></inline></bind>\
            <fast xmlns='urn:xmpp:fast:0'><mechanism>HT-SHA-256-NONE</mechanism></fast></inline></authentication>\
            <sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'><channel-binding type='tls-exporter'/></sasl-channel-binding>
            """)
        #expect(offer.sasl2 == .init(offer: SASLOffer(mechanisms: ["SCRAM-SHA-256", "SCRAM-SHA-256-PLUS", "X-UNKNOWN NAME"],
                                                      channelBindingTypes: ["tls-exporter"]),
                                     bind2: true, bind2StreamManagement: true, streamManagement: true,
                                     fastMechanisms: names("HT-SHA-256-NONE")))
        #expect(offer.sasl2?.mechanisms == names("SCRAM-SHA-256", "SCRAM-SHA-256-PLUS"), "XEP-0474 hashes every name; the choice takes valid ones")
        #expect(offer.mechanisms.isEmpty, "SASL2's mechanisms are not legacy SASL's")
    }

    /// Prosody 0.12.3 with mod_sasl2 and mod_sasl2_bind2 only, as the test bed's `sasl2.localhost` offers them.
    @Test func sasl2AsProsodyOffersItWithBind2Only() throws {
        let offer = try features("""
            <authentication xmlns='urn:xmpp:sasl:2'><mechanism>SCRAM-SHA-1</mechanism><mechanism>PLAIN</mechanism><inline>\
            <bind xmlns='urn:xmpp:bind:0'><inline><feature var='urn:xmpp:carbons:2'/><feature var='urn:xmpp:csi:0'/></inline></bind>\
            </inline></authentication><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>SCRAM-SHA-1</mechanism>\
            <mechanism>PLAIN</mechanism></mechanisms>
            """)
        #expect(offer.sasl2 == .init(offer: SASLOffer(mechanisms: ["SCRAM-SHA-1", "PLAIN"], channelBindingTypes: nil), bind2: true,
                                     streamManagement: false, fastMechanisms: []))
    }

    @Test func anotherElementIsNotFeatures() {
        #expect(throws: StanzaParseError(element: "features", .unexpectedElement(name: "message", namespace: "jabber:client"))) {
            try StreamFeatures(element: TestXML.element("<message xmlns='jabber:client'/>"))
        }
    }

    @Test func theStrongestMechanismBothSidesCanUseIsChosen() throws {
        let tls13 = SASLChoice.Channel(exporterUsable: true), tls12 = SASLChoice.Channel(exporterUsable: false)
        let all = names("PLAIN", "SCRAM-SHA-1", "SCRAM-SHA-1-PLUS", "SCRAM-SHA-256", "SCRAM-SHA-256-PLUS")
        let both: Set<ChannelBindingType> = [.tlsExporter, .tlsServerEndPoint]
        #expect(try SASLChoice.choose(offered: all, channelBindings: both, channel: tls13, sasl2: false) == .scram(.sha256, binding: .bound(.tlsExporter)))
        #expect(try SASLChoice.choose(offered: all, channelBindings: both, channel: tls12, sasl2: false)
                == .scram(.sha256, binding: .bound(.tlsServerEndPoint)), "no exporter without TLS 1.3 or EMS")
        #expect(try SASLChoice.choose(offered: all, channelBindings: nil, channel: tls13, sasl2: false)
                == .scram(.sha256, binding: .bound(.tlsServerEndPoint)), "unannounced: the type every server must support")
        #expect(try SASLChoice.choose(offered: names("SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"), channelBindings: [.tlsExporter], channel: tls13, sasl2: false)
                == .scram(.sha1, binding: .bound(.tlsExporter)))
        #expect(try SASLChoice.choose(offered: names("SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"), channelBindings: [.tlsExporter], channel: tls12, sasl2: false)
                == .scram(.sha1, binding: .none), "the server's only type is one we cannot compute here: n, not y")
        #expect(try SASLChoice.choose(offered: names("SCRAM-SHA-256", "PLAIN"), channelBindings: nil, channel: tls13, sasl2: false)
                == .scram(.sha256, binding: .notOfferedByServer), "we could bind but the server offered no -PLUS: y")
        #expect(try SASLChoice.choose(offered: all, channelBindings: nil, channel: nil, sasl2: false) == .scram(.sha256, binding: .none),
                "no TLS: no binding, and never PLAIN")
        #expect(try SASLChoice.choose(offered: names("PLAIN", "X-OAUTH2"), channelBindings: nil, channel: tls12, sasl2: false) == .plain)
        #expect(SASLChoice.scram(.sha256, binding: .bound(.tlsExporter)).mechanismName.rawValue == "SCRAM-SHA-256-PLUS")
        #expect(SASLChoice.scram(.sha1, binding: .notOfferedByServer).mechanismName.rawValue == "SCRAM-SHA-1")
    }

    @Test func whatTheBridgeRefusesToAuthenticateWith() {
        #expect(throws: SASLChoiceError.plainWithoutTLS) {
            try SASLChoice.choose(offered: names("PLAIN"), channelBindings: nil, channel: nil, sasl2: false)
        }
        #expect(throws: SASLChoiceError.noUsableMechanism(names("X-OAUTH2", "DIGEST-MD5"))) {
            try SASLChoice.choose(offered: names("X-OAUTH2", "DIGEST-MD5"), channelBindings: nil, channel: .init(exporterUsable: true), sasl2: false)
        }
        #expect(throws: SASLChoiceError.channelBindingNotAnnounced, "XEP-0440 under SASL2: -PLUS without announced types") {
            try SASLChoice.choose(offered: names("SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"), channelBindings: nil, channel: .init(exporterUsable: true), sasl2: true)
        }
        #expect(throws: SASLChoiceError.plusMechanismsMissing, "XEP-0440 under SASL2: announced types without -PLUS") {
            try SASLChoice.choose(offered: names("SCRAM-SHA-256"), channelBindings: [.tlsExporter], channel: .init(exporterUsable: true), sasl2: true)
        }
        #expect(SASLChoiceError.plainWithoutTLS.description.contains("in the clear"))
    }
}
