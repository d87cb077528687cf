import Foundation
import IsthmusCommon
import Testing
import XMPP

/// The HT mechanisms (draft-schmaus-kitten-sasl-ht-08), their names and which one a token is asked for, with values
/// computed independently with Python's hmac.
@Suite struct HashedTokenTests {
    func names(_ names: String...) -> [SASLMechanismName] { names.map { SASLMechanismName($0)! } }

    @Test func namesReadAndWriteBack() {
        for name in ["HT-SHA-256-NONE", "HT-SHA-256-ENDP", "HT-SHA-256-EXPR"] {
            #expect(HashedTokenMechanism(SASLMechanismName(name)!)?.name.rawValue == name)
        }
        #expect(HashedTokenMechanism(SASLMechanismName("HT-SHA-256-UNIQ")!) == nil, "tls-unique is not computed")
        #expect(HashedTokenMechanism(SASLMechanismName("HT-SHA-512-ENDP")!) == nil)
        #expect(HashedTokenMechanism(SASLMechanismName("SCRAM-SHA-1")!) == nil)
    }

    @Test func theStrongestBindingTheChannelGivesIsAskedFor() {
        let all = names("HT-SHA-256-NONE", "HT-SHA-256-UNIQ", "HT-SHA-256-ENDP", "HT-SHA-256-EXPR")
        let both: [ChannelBindingType: [UInt8]] = [.tlsExporter: [1], .tlsServerEndPoint: [2]]
        #expect(HashedTokenMechanism.strongest(offered: all, bindingData: both) == HashedTokenMechanism(binding: .tlsExporter))
        #expect(HashedTokenMechanism.strongest(offered: all, bindingData: [.tlsServerEndPoint: [2]]) == HashedTokenMechanism(binding: .tlsServerEndPoint),
                "TLS 1.2 without the extended master secret: no exporter")
        #expect(HashedTokenMechanism.strongest(offered: names("HT-SHA-256-UNIQ", "HT-SHA-256-NONE"), bindingData: both) == HashedTokenMechanism(binding: nil))
        #expect(HashedTokenMechanism.strongest(offered: names("HT-SHA-256-UNIQ"), bindingData: both) == nil)
    }

    @Test func theExchangeWithoutBinding() throws {
        var client = try HashedTokenClient(mechanism: HashedTokenMechanism(binding: nil), username: "user", token: "secret-token:fast-abc",
                                           bindingData: [])
        #expect(Data(client.initialResponse()).base64EncodedString() == "dXNlcgAxpA+V4iJYmvuMKMISEZQTyZ8VMO0RRY8szRQZiO5wng==")
        #expect(!client.isAuthenticated)
        try client.receive(responderMessage: Array(Data(base64Encoded: "kP0GDjSVGqRF4nKLtIi3QlXFuDVf6mGFRvdYjlQnogQ=")!))
        #expect(client.isAuthenticated)
    }

    @Test func aWrongResponderMessageOrAnInvalidNameIsRefused() throws {
        var client = try HashedTokenClient(mechanism: HashedTokenMechanism(binding: .tlsServerEndPoint), username: "user",
                                           token: "secret-token:fast-abc", bindingData: Array(repeating: 9, count: 32))
        // The responder message of the exchange without binding: the binding data must count.
        #expect(throws: HashedTokenError.responderMismatch) {
            try client.receive(responderMessage: Array(Data(base64Encoded: "kP0GDjSVGqRF4nKLtIi3QlXFuDVf6mGFRvdYjlQnogQ=")!))
        }
        #expect(!client.isAuthenticated)
        #expect(throws: HashedTokenError.invalidUsername) {
            try HashedTokenClient(mechanism: HashedTokenMechanism(binding: nil), username: "a\0b", token: "t", bindingData: [])
        }
    }

    /// A token is a secret like the password: what is printed of it names the mechanism only.
    @Test func aTokensDescriptionHoldsNoSecret() {
        let token = FASTToken(mechanism: HashedTokenMechanism(binding: nil), secret: "secret-token:fast-abc", expiry: nil, count: 3)
        #expect(!token.description.contains("fast-abc") && token.description.contains("HT-SHA-256-NONE"))
    }
}
