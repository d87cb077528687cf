import Foundation
import IsthmusCommon
import XMLStream

/// Stream negotiation (RFC 6120 §4.3): STARTTLS (§5), SASL2 (`+SASL2`) or legacy SASL (§6), then — unless SASL2 did
/// it inline — XEP-0198 resumption or resource binding (§7) and `<enable/>`.
extension ClientStateMachine {
    /// The TLS handshake the connection did after ``Action/startTLS`` succeeded: restart the stream inside it.
    public mutating func tlsEstablished(_ tls: TLS) -> [Action] {
        guard state == .awaitingTLS else { return [] }
        self.tls = tls
        return restart()
    }

    /// One top-level element before established.
    mutating func negotiate(_ element: XElement, now: ContinuousClock.Instant) -> [Action] {
        switch (state, element.name, element.namespace) {
        case (.awaitingFeatures, "features", XMPPNamespace.streams):
            guard let features = try? StreamFeatures(element: element) else {
                return fail(.protocolViolation("unreadable stream features"), condition: .invalidXML)
            }
            return authenticated ? featuresAfterAuthentication(features) : featuresBeforeAuthentication(features)
        case (.awaitingTLSProceed, "proceed", XMPPNamespace.tls):
            state = .awaitingTLS
            return [.startTLS]
        case (.awaitingTLSProceed, "failure", XMPPNamespace.tls):
            state = .finished
            return [.disconnect(.tlsRefused)]
        case (.authenticating, _, XMPPNamespace.sasl) where sasl2Request == nil:
            return saslReceived(element)
        case (.authenticating, _, XMPPNamespace.sasl2) where sasl2Request != nil:
            return sasl2Received(element)
        case (.resuming, _, XMPPNamespace.streamManagement), (.enablingStreamManagement, _, XMPPNamespace.streamManagement):
            return streamManagementReceived(element)
        case (.binding, "iq", _):
            return bindAnswered(element)
        case (.enablingStreamManagement, _, _) where Self.isStanza(element),
             (.awaitingFeatures, _, _) where jid != nil && Self.isStanza(element):   // bound by Bind2, not yet enabled
            beforeEnabled.append(element)
            return []
        default:
            return fail(.protocolViolation("unexpected <\(element.name)> during negotiation"), condition: .notAuthorized)
        }
    }

    private mutating func restart() -> [Action] {
        state = .awaitingStreamHeader
        return [.resetParser, streamHeader]
    }

    // MARK: STARTTLS and SASL

    private mutating func featuresBeforeAuthentication(_ features: StreamFeatures) -> [Action] {
        if tls == nil {
            if features.startTLS != nil {
                state = .awaitingTLSProceed
                return [.sendElement(XElement("starttls", namespace: XMPPNamespace.tls))]
            }
            guard configuration.allowPlaintext else { return abort(.tlsNotOffered) }
        }
        if let sasl2 = features.sasl2 { return authenticateWithSASL2(sasl2, features: features) }
        let mechanism: SASLMechanismName, initial: [UInt8]
        do {
            (mechanism, initial) = try startPasswordExchange(offered: features.mechanisms, features: features, offer: features.offer,
                                                             sasl2: false)
        } catch {
            return abort(error)
        }
        state = .authenticating
        return [.sendElement(Self.saslElement("auth", initial, mechanism: mechanism.rawValue))]
    }

    /// Chooses the strongest mechanism for the password among `offered` (XEP-0440's rules when `sasl2`) and starts it:
    /// its name and initial response. `offer`: what XEP-0474 checks SCRAM's server-first against.
    mutating func startPasswordExchange(offered: [SASLMechanismName], features: StreamFeatures, offer: SASLOffer,
                                        sasl2: Bool) throws(ClientError) -> (SASLMechanismName, [UInt8]) {
        let choice: SASLChoice
        do {
            choice = try SASLChoice.choose(offered: offered, channelBindings: features.channelBindings, channel: tls?.channel,
                                           sasl2: sasl2)
        } catch {
            throw .noUsableMechanism(error)
        }
        let initial: [UInt8]
        switch choice {
        case .plain:
            guard case .password(let password) = configuration.credential else { throw .passwordRequired }
            sasl = .plain
            initial = [0] + Array(configuration.username.utf8) + [0] + Array(password.utf8)
        case .scram(let hash, let bindingChoice):
            let binding: ChannelBinding
            switch bindingChoice {
            case .none: binding = .notSupported
            case .notOfferedByServer: binding = .notOfferedByServer
            case .bound(let type):
                guard let data = tls?.bindingData[type] else { throw .channelBindingUnavailable(type) }
                binding = .bound(type: type, data: data)
            }
            do {
                let client = try SCRAMClient(hash: hash, username: configuration.username, credential: configuration.credential,
                                             cached: credentials.saltedPassword, binding: binding, nonce: nonce, offer: offer)
                initial = client.clientFirst()
                sasl = .scram(client, sentFinal: false)
            } catch {
                throw .scram(error)
            }
        }
        mechanism = choice.mechanismName
        return (choice.mechanismName, initial)
    }

    private mutating func saslReceived(_ element: XElement) -> [Action] {
        guard let data = Self.base64(element.text) else {
            return fail(.protocolViolation("SASL <\(element.name)> is not base64"), condition: .badFormat)
        }
        do {
            switch element.name {
            case "challenge":
                return [.sendElement(Self.saslElement("response", try answer(challenge: data)))]
            case "success":
                let salted = try finishExchange(additionalData: data)
                sasl = nil
                authenticated = true
                return [.authenticated(saltedPassword: salted)] + restart()
            case "failure":
                return refused(element, textNamespace: XMPPNamespace.sasl)
            default:
                return fail(.protocolViolation("unexpected SASL <\(element.name)>"), condition: .notAuthorized)
            }
        } catch {
            return abort(error)
        }
    }

    /// SCRAM's answer to a challenge: client-final to server-first; to server-final sent as a challenge (some servers
    /// do, then succeed empty) the signature check and an empty response.
    mutating func answer(challenge data: [UInt8]) throws(ClientError) -> [UInt8] {
        guard case .scram(var client, let sentFinal) = sasl else { throw .protocolViolation("a SASL challenge the mechanism does not take") }
        do {
            if !sentFinal {
                let final = try client.receive(serverFirst: data)
                sasl = .scram(client, sentFinal: true)
                return final
            }
            try client.receive(serverFinal: data)
            sasl = .scram(client, sentFinal: true)
            return []
        } catch {
            throw .scram(error)
        }
    }

    /// The mechanism's last word at success (SCRAM's server-final unless a challenge carried it; HT's responder
    /// message): the server must prove it knows the credential. Returns SCRAM's salted password (also kept in
    /// ``credentials``).
    mutating func finishExchange(additionalData data: [UInt8]?) throws(ClientError) -> SCRAMClient.SaltedPassword? {
        switch sasl {
        case .scram(var client, _):
            if !client.isAuthenticated {
                do {
                    try client.receive(serverFinal: data ?? [])
                } catch {
                    throw .scram(error)
                }
            }
            credentials.saltedPassword = client.saltedPassword
            return client.saltedPassword
        case .hashedToken(var client):
            do {
                try client.receive(responderMessage: data ?? [])
            } catch {
                throw .hashedToken(error)
            }
            return nil
        case .plain, nil:
            return nil
        }
    }

    /// The server refused the authentication (`<failure>`, legacy or SASL2): its condition and text. When the exchange
    /// used something kept from an earlier login (a FAST token, the salted password), that is forgotten and the error
    /// asks for another attempt at once, with the password.
    mutating func refused(_ element: XElement, textNamespace: String) -> [Action] {
        let condition = element.elements.first { $0.name != "text" }.map { SASLFailureCondition($0.name) } ?? SASLFailureCondition("undefined")
        let text = element.child("text", namespace: textNamespace)?.text
        switch sasl {
        case .hashedToken:
            credentials.fastToken = nil
            return [.fastToken(nil)] + abort(.keptCredentialRefused(.fastToken, condition, text: text))
        case .scram(let client, _) where client.usedCachedSaltedPassword:
            credentials.saltedPassword = nil
            return [.saltedPasswordRefused] + abort(.keptCredentialRefused(.saltedPassword, condition, text: text))
        default:
            return abort(.authenticationFailed(condition, text: text))
        }
    }

    /// `<name xmlns=sasl mechanism=…>base64</name>`; `=` stands for an empty initial response (RFC 6120 §6.4.2).
    private static func saslElement(_ name: String, _ data: [UInt8], mechanism: String? = nil) -> XElement {
        let text = data.isEmpty ? (name == "auth" ? "=" : "") : Data(data).base64EncodedString()
        return XElement(name, namespace: XMPPNamespace.sasl, ["mechanism": mechanism], children: text.isEmpty ? [] : [.text(text)])
    }

    static func base64(_ text: String) -> [UInt8]? {
        let compact = text.filter { !$0.isWhitespace }
        if compact.isEmpty || compact == "=" { return [] }
        return Data(base64Encoded: compact).map(Array.init)
    }

    // MARK: Resume, bind, enable

    private mutating func featuresAfterAuthentication(_ features: StreamFeatures) -> [Action] {
        featuresAfterAuthentication = features
        if jid != nil {   // bound by Bind2 without XEP-0198 inside: enable it now if offered
            guard features.streamManagement else { return established() }
            state = .enablingStreamManagement
            return [.sendNonza(.enable(resume: true, max: nil))]
        }
        if features.streamManagement, let resumption, let request = resumption.streamManagement.resumeRequest {
            state = .resuming
            return [.sendNonza(request)]
        }
        return bind(features)
    }

    private mutating func bind(_ features: StreamFeatures) -> [Action] {
        guard features.bind else { return fail(.protocolViolation("no resource binding offered"), condition: .unsupportedFeature) }
        let id = StanzaAttributeID("bind-1")!
        bindID = id
        state = .binding
        let resource = XElement("resource", namespace: XMPPNamespace.bind, children: [.text(configuration.resource)])
        let request = XElement("bind", namespace: XMPPNamespace.bind, children: [.element(resource)])
        return [.send(.iq(IQ(type: .set, id: id, payload: .other(request))))]
    }

    private mutating func bindAnswered(_ element: XElement) -> [Action] {
        guard let iq = try? IQ(element: element), iq.id == bindID, iq.type == .result || iq.type == .error else {
            return fail(.protocolViolation("unexpected <iq> while binding"), condition: .notAuthorized)
        }
        guard iq.type == .result, case .other(let payload)? = iq.payload,
              let text = payload.child("jid", namespace: XMPPNamespace.bind)?.text, let bound = JID(text) else {
            return abort(.bindFailed(iq.error))
        }
        jid = bound
        guard featuresAfterAuthentication?.streamManagement == true else {
            return [.bound(bound)] + established()
        }
        state = .enablingStreamManagement
        return [.bound(bound), .sendNonza(.enable(resume: true, max: nil))]
    }

    private mutating func streamManagementReceived(_ element: XElement) -> [Action] {
        let nonza: StreamManagementNonza?
        do {
            nonza = try StreamManagementNonza(element: element)
        } catch {
            return fail(.protocolViolation(error.description), condition: .invalidXML)
        }
        switch (state, nonza) {
        case (.resuming, .resumed(_, let h)):
            return sessionResumed(h: h, jid: resumption?.jid)
        case (.resuming, .failed(_, let h)):
            return sessionNotResumed(h: h) + bind(featuresAfterAuthentication!)
        case (.enablingStreamManagement, .enabled(let id, let resume, _, let location)):
            streamManagement = StreamManagement(enabled: id, resumable: resume, location: location)
            return established()
        case (.enablingStreamManagement, .failed):
            streamManagement = nil
            return established()
        default:
            return fail(.protocolViolation("unexpected <\(element.name)> during negotiation"), condition: .undefinedCondition)
        }
    }

    /// XEP-0198 `<resumed h>` (after the features, or inside SASL2's `<success>`): the kept session goes on as `jid`.
    /// What the server confirms is acknowledged, what it never handled is sent again, in order.
    mutating func sessionResumed(h: UInt32, jid resumedJID: JID?) -> [Action] {
        guard var management = resumption?.streamManagement else { return [] }
        let outcome: (confirmed: [Stanza], resend: [Stanza])
        do {
            outcome = try management.resumed(h: h)
        } catch {
            return failHandledCountTooHigh(error)
        }
        streamManagement = management
        jid = resumedJID ?? resumption?.jid
        resumption = nil
        return (outcome.confirmed.isEmpty ? [] : [.acknowledged(outcome.confirmed)])
            + [.resumed(resend: outcome.resend)] + outcome.resend.map(Action.send) + established()
    }

    /// XEP-0198 `<failed h?>` to a resumption: what the server confirms and what it may or may not have handled. A new
    /// session follows (the caller binds).
    mutating func sessionNotResumed(h: UInt32?) -> [Action] {
        let outcome: (confirmed: [Stanza], unknown: [Stanza]) = resumption?.streamManagement.resumeFailed(h: h) ?? ([], [])
        resumption = nil
        return (outcome.confirmed.isEmpty ? [] : [.acknowledged(outcome.confirmed)]) + [.resumeFailed(unknown: outcome.unknown)]
    }

    mutating func established() -> [Action] {
        state = .connected
        negotiationStarted = nil
        let early = beforeEnabled
        beforeEnabled = []
        uncounted += early.count   // each yields one deliver or handledHere, hence one handled() call
        return (jid.map { [.established($0)] } ?? []) + early.flatMap { receivedWhileConnected($0) }
    }
}
