import Foundation
import IsthmusCommon
import XMLStream

/// SASL2's `<success>` (XEP-0388 §4.5.1) read into what the machine acts on: the mechanism's last data, who we are now,
/// and the outcome of what the `<authenticate>` asked for inline (Bind2's `<bound>`, XEP-0198's `<resumed>` or
/// `<failed>`, a FAST `<token>`).
struct SASL2Success: Sendable, Hashable {
    /// `<additional-data>`, decoded: SCRAM's server-final or HT's responder message.
    var additionalData: [UInt8]?
    /// `<authorization-identifier>`: the bare JID, or the full one once a resource is bound or resumed.
    var authorizationIdentifier: JID
    /// Bind2 bound a resource (`<bound>`).
    var bound = false
    /// What became of the XEP-0198 `<enable>` sent inside the Bind2 request: `.enabled` or `.failed` (in `<bound>`).
    var enabled: StreamManagementNonza?
    /// The inline XEP-0198 resumption: `.resumed` or `.failed`.
    var resumption: StreamManagementNonza?
    /// A new FAST token (asked for, or the server rotating the one used), for `tokenMechanism`.
    var token: FASTToken?

    /// Reads the element; `tokenMechanism`: the mechanism a `<token>` in it is for (the one asked for, or the one
    /// authenticated with — XEP-0484 §4.5). Throws when a part the machine relies on is missing or malformed.
    init(element: XElement, tokenMechanism: HashedTokenMechanism?) throws(StanzaParseError) {
        if let data = element.child("additional-data", namespace: XMPPNamespace.sasl2) {
            guard let decoded = Data(base64Encoded: data.text.filter { !$0.isWhitespace }) else {
                throw StanzaParseError(element: "success", .invalidValue(field: "additional-data", value: data.text))
            }
            additionalData = Array(decoded)
        }
        let identifier = element.child("authorization-identifier", namespace: XMPPNamespace.sasl2)?.text ?? ""
        guard let jid = JID(identifier.filter { !$0.isWhitespace }) else {
            throw StanzaParseError(element: "success", .invalidValue(field: "authorization-identifier", value: identifier))
        }
        authorizationIdentifier = jid
        if let bound = element.child("bound", namespace: XMPPNamespace.bind2) {
            self.bound = true
            enabled = try Self.firstNonza(in: bound)
        }
        resumption = try Self.firstNonza(in: element)
        if let token = element.child("token", namespace: XMPPNamespace.fast), let tokenMechanism {
            guard let secret = token[attribute: "token"], !secret.isEmpty else {
                throw StanzaParseError(element: "token", .missingAttribute("token"))
            }
            self.token = FASTToken(mechanism: tokenMechanism, secret: secret, expiry: token[attribute: "expiry"])
        }
    }

    /// The first XEP-0198 element among `element`'s children.
    private static func firstNonza(in element: XElement) throws(StanzaParseError) -> StreamManagementNonza? {
        for child in element.elements {
            if let nonza = try StreamManagementNonza(element: child) { return nonza }
        }
        return nil
    }
}
