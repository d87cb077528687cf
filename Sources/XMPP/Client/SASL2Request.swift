import Foundation
import XMLStream

/// One SASL2 `<authenticate>` (XEP-0388 §4.2) and what it asks for besides authentication: a Bind2 resource with
/// XEP-0198 enabled in the same round trip (XEP-0386 §4), the resumption of a kept XEP-0198 session (XEP-0198 §"SASL2"),
/// a FAST token, or the use of one (XEP-0484 §4.2, §4.4). What was asked decides how the `<success>` is read.
struct SASL2Request: Sendable {
    /// The Bind2 tag: the resource the server makes is `tag` plus something of its own (Prosody: a hash of the
    /// user-agent id, so it stays the same across logins).
    static let bindTag = "Isthmus"

    var mechanism: SASLMechanismName
    var initialResponse: [UInt8]
    var userAgent: SASL2UserAgent
    /// Bind a resource inside the authentication (Bind2).
    var bind = false
    /// Enable XEP-0198 (resumable) inside that bind.
    var enableStreamManagement = false
    /// Take up this kept XEP-0198 session (`<resume previd h>`) instead of binding, if the server still holds it.
    var resume: StreamManagementNonza? = nil
    /// Ask for a FAST token for this mechanism.
    var requestToken: HashedTokenMechanism? = nil
    /// Authenticating with a FAST token: this is its `count`.
    var fastCount: Int? = nil

    /// The element to send. Every mechanism the bridge uses starts with data, so `<initial-response>` is always there.
    var element: XElement {
        var element = XElement("authenticate", namespace: XMPPNamespace.sasl2, ["mechanism": mechanism.rawValue])
        element.append(XElement("initial-response", namespace: XMPPNamespace.sasl2,
                                children: [.text(Data(initialResponse).base64EncodedString())]))
        element.append(userAgent.element)
        if let resume { element.append(resume.element) }
        if bind {
            var request = XElement("bind", namespace: XMPPNamespace.bind2)
            request.append(XElement("tag", namespace: XMPPNamespace.bind2, children: [.text(Self.bindTag)]))
            if enableStreamManagement { request.append(StreamManagementNonza.enable(resume: true, max: nil).element) }
            element.append(request)
        }
        if let requestToken {
            element.append(XElement("request-token", namespace: XMPPNamespace.fast, ["mechanism": requestToken.name.rawValue]))
        }
        if let fastCount { element.append(XElement("fast", namespace: XMPPNamespace.fast, ["count": String(fastCount)])) }
        return element
    }
}
