import Foundation
import IsthmusCommon
import XMLStream

/// SASL2 (XEP-0388): one `<authenticate>` that also binds the resource (Bind2, XEP-0386) with XEP-0198 enabled, or
/// resumes the kept XEP-0198 session (XEP-0198 §"SASL2"), and asks for or uses a FAST token (XEP-0484) — each only
/// when the server offers it inline. No stream restart follows success; what the authentication did not settle
/// (Bind2 without inline XEP-0198, a server that offers no Bind2, a resumption it cannot do inline) is done after the
/// features that follow it, as on the legacy path.
///
/// Against Prosody 0.12.3 with Debian's prosody-modules (hg 2023-02-23) only `mod_sasl2` and `mod_sasl2_bind2` work:
/// `mod_sasl2_sm` calls `mod_smacks.do_enable`/`do_resume`, which only trunk's mod_smacks has (no `<success>` is ever
/// sent), and `mod_sasl2_fast` reads the stream's `from` from an event field 0.12 does not fill (no features at all).
/// There the bridge binds with Bind2, enables XEP-0198 after the features and resumes after them.
extension ClientStateMachine {
    /// What SASL2 did on one connection, for logs and `isthmus doctor`.
    public struct SASL2Use: Sendable, Hashable {
        /// The resource was bound inside the authentication (Bind2).
        public var bind2 = false
        /// XEP-0198 was enabled or the kept session resumed inside the authentication.
        public var inlineStreamManagement = false
        /// Logged in with a FAST token.
        public var fastLogin = false
        /// The server offers FAST (and so issues tokens to the bridge when it may ask: inside TLS).
        public var fastOffered = false

        public init(bind2: Bool = false, inlineStreamManagement: Bool = false, fastLogin: Bool = false, fastOffered: Bool = false) {
            self.bind2 = bind2
            self.inlineStreamManagement = inlineStreamManagement
            self.fastLogin = fastLogin
            self.fastOffered = fastOffered
        }
    }

    /// Starts SASL2: with the kept FAST token when the server takes its mechanism and this channel gives its binding,
    /// else with the password (the strongest mechanism, XEP-0440's checks) asking for a token for next time.
    mutating func authenticateWithSASL2(_ offer: StreamFeatures.SASL2, features: StreamFeatures) -> [Action] {
        var request: SASL2Request
        var actions: [Action] = []
        if let (token, bindingData) = usableFASTToken(offer) {
            var used = token
            used.count += 1
            let client: HashedTokenClient
            do {
                client = try HashedTokenClient(mechanism: token.mechanism, username: configuration.username, token: token.secret,
                                               bindingData: bindingData)
            } catch {
                return abort(.hashedToken(error))
            }
            credentials.fastToken = used
            sasl = .hashedToken(client)
            mechanism = token.mechanism.name
            request = SASL2Request(mechanism: token.mechanism.name, initialResponse: client.initialResponse(),
                                   userAgent: configuration.userAgent, fastCount: used.count)
            actions.append(.fastToken(used))
        } else {
            do {
                let (name, initial) = try startPasswordExchange(offered: offer.mechanisms, features: features, offer: offer.offer,
                                                                sasl2: true)
                request = SASL2Request(mechanism: name, initialResponse: initial, userAgent: configuration.userAgent)
            } catch {
                return abort(error)
            }
            if configuration.fastTokens, let tls {
                request.requestToken = HashedTokenMechanism.strongest(offered: offer.fastMechanisms, bindingData: tls.bindingData)
            }
        }
        // A kept session is resumed inline if the server can (Bind2 beside it binds only if that fails), else after
        // the features — and then nothing may be bound before (a server refuses to resume a bound stream).
        let kept = resumption?.streamManagement.resumeRequest
        request.resume = offer.streamManagement ? kept : nil
        request.bind = offer.bind2 && (kept == nil || request.resume != nil)
        request.enableStreamManagement = request.bind && (offer.bind2StreamManagement || offer.streamManagement)
        sasl2Request = request
        sasl2 = SASL2Use(fastLogin: request.fastCount != nil, fastOffered: !offer.fastMechanisms.isEmpty)
        state = .authenticating
        return actions + [.sendElement(request.element)]
    }

    /// The kept token and its binding data, when this login may use it: FAST wanted and offered with the token's
    /// mechanism, inside TLS (the draft allows HT only there), and the channel gives the mechanism's binding.
    private func usableFASTToken(_ offer: StreamFeatures.SASL2) -> (FASTToken, [UInt8])? {
        guard configuration.fastTokens, let tls, let token = credentials.fastToken,
              offer.fastMechanisms.contains(token.mechanism.name) else { return nil }
        guard let binding = token.mechanism.binding else { return (token, []) }
        return tls.bindingData[binding].map { (token, $0) }
    }

    /// One SASL2 element while authenticating: a challenge, the success, a failure, or a `<continue>` (refused: tasks
    /// need a person).
    mutating func sasl2Received(_ element: XElement) -> [Action] {
        do {
            switch element.name {
            case "challenge":
                guard let data = Self.base64(element.text) else {
                    return fail(.protocolViolation("SASL2 <challenge> is not base64"), condition: .badFormat)
                }
                let response = try answer(challenge: data)
                let text = response.isEmpty ? [] : [XNode.text(Data(response).base64EncodedString())]
                return [.sendElement(XElement("response", namespace: XMPPNamespace.sasl2, children: text))]
            case "success":
                return try sasl2Succeeded(element)
            case "failure":
                return refused(element, textNamespace: XMPPNamespace.sasl2)
            case "continue":
                let tasks = element.child("tasks", namespace: XMPPNamespace.sasl2)?
                    .children("task", namespace: XMPPNamespace.sasl2).map(\.text) ?? []
                return abort(.sasl2TasksRequired(tasks, text: element.child("text", namespace: XMPPNamespace.sasl2)?.text))
            default:
                return fail(.protocolViolation("unexpected SASL2 <\(element.name)>"), condition: .notAuthorized)
            }
        } catch {
            return abort(error)
        }
    }

    /// `<success>`: the server proved it knows the credential (checked first), then what was asked inline, in the
    /// order that settles the session: a resumption, else Bind2's resource and XEP-0198, else the features that follow.
    private mutating func sasl2Succeeded(_ element: XElement) throws(ClientError) -> [Action] {
        guard let request = sasl2Request else { return [] }
        let success: SASL2Success
        do {
            // A token comes for the mechanism asked for, or rotates the one used (XEP-0484 §4.3, §4.5).
            let tokenMechanism = request.requestToken ?? (request.fastCount != nil ? credentials.fastToken?.mechanism : nil)
            success = try SASL2Success(element: element, tokenMechanism: tokenMechanism)
        } catch {
            return fail(.protocolViolation("unreadable SASL2 <success>: \(error)"), condition: .invalidXML)
        }
        let salted = try finishExchange(additionalData: success.additionalData)
        sasl = nil
        authenticated = true
        var actions: [Action] = [.authenticated(saltedPassword: salted)]
        if let token = success.token {
            credentials.fastToken = token
            actions.append(.fastToken(token))
        }
        switch success.resumption {
        case .resumed(_, let h):
            sasl2?.inlineStreamManagement = true
            let full = success.authorizationIdentifier.resource == nil ? nil : success.authorizationIdentifier
            return actions + sessionResumed(h: h, jid: full)
        case .failed(_, let h):
            actions += sessionNotResumed(h: h)
        default:
            break
        }
        guard success.bound else {
            state = .awaitingFeatures   // resume or bind after them
            return actions
        }
        guard success.authorizationIdentifier.resource != nil else {
            return fail(.protocolViolation("Bind2 bound no full JID"), condition: .undefinedCondition)
        }
        jid = success.authorizationIdentifier
        sasl2?.bind2 = true
        actions.append(.bound(success.authorizationIdentifier))
        switch success.enabled {
        case .enabled(let id, let resume, _, let location):
            sasl2?.inlineStreamManagement = true
            streamManagement = StreamManagement(enabled: id, resumable: resume, location: location)
            return actions + established()
        case .failed:
            return actions + established()   // XEP-0198 refused: the session goes on without it
        default:
            state = .awaitingFeatures   // XEP-0198 not asked inline: enabled after the features, if offered
            return actions
        }
    }
}
