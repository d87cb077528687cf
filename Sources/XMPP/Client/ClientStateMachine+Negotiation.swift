import Foundation
import IsthmusCommon
import XMLStream

/// Stream negotiation (RFC 6120 §4.3): STARTTLS (§5), legacy SASL (§6), then XEP-0198 resumption or resource
/// binding (§7) and `<enable/>`.
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
        case (.authenticating, _, XMPPNamespace.sasl):
            return saslReceived(element)
        case (.resuming, _, XMPPNamespace.streamManagement), (.enablingStreamManagement, _, XMPPNamespace.streamManagement):
            return streamManagementReceived(element)
        case (.binding, "iq", _):
            return bindAnswered(element)
        case (.enablingStreamManagement, _, _) where Self.isStanza(element):
            beforeEnabled.append(element)
            return []
        default:
            return fail(.protocolViolation("unexpected <\(element.name)> during negotiation"), condition: .notAuthorized)
        }
    }

    private mutating func restart() -> [Action] {
        state = .awaitingStreamHeader
        return [.resetParser, .sendStreamHeader(to: configuration.domain)]
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
        let choice: SASLChoice
        do {
            choice = try SASLChoice.choose(offered: features.mechanisms, channelBindings: features.channelBindings,
                                           channel: tls?.channel, sasl2: false)
        } catch {
            return abort(.noUsableMechanism(error))
        }
        let initial: [UInt8]
        switch choice {
        case .plain:
            guard case .password(let password) = configuration.credential else { return abort(.passwordRequired) }
            sasl = .plain
            initial = [0] + Array(configuration.username.utf8) + [0] + Array(password.utf8)
        case .scram(let hash, let bindingChoice):
            let binding: ChannelBinding
            switch bindingChoice {
            case .none: binding = .notSupported
            case .notOfferedByServer: binding = .notOfferedByServer
            case .bound(let type):
                guard let data = tls?.bindingData[type] else { return abort(.channelBindingUnavailable(type)) }
                binding = .bound(type: type, data: data)
            }
            do {
                let client = try SCRAMClient(hash: hash, username: configuration.username, credential: configuration.credential,
                                             binding: binding, nonce: nonce, offer: features.offer)
                initial = client.clientFirst()
                sasl = .scram(client, sentFinal: false)
            } catch {
                return abort(.scram(error))
            }
        }
        state = .authenticating
        mechanism = choice.mechanismName
        return [.sendElement(Self.saslElement("auth", initial, mechanism: choice.mechanismName.rawValue))]
    }

    private mutating func saslReceived(_ element: XElement) -> [Action] {
        guard let data = Self.base64(element.text) else {
            return fail(.protocolViolation("SASL <\(element.name)> is not base64"), condition: .badFormat)
        }
        switch (element.name, sasl) {
        case ("challenge", .scram(var client, let sentFinal)):
            do {
                if !sentFinal {
                    let final = try client.receive(serverFirst: data)
                    sasl = .scram(client, sentFinal: true)
                    return [.sendElement(Self.saslElement("response", final))]
                }
                // Some servers send server-final as a challenge, then an empty success.
                try client.receive(serverFinal: data)
                sasl = .scram(client, sentFinal: true)
                return [.sendElement(Self.saslElement("response", []))]
            } catch {
                return abort(.scram(error))
            }
        case ("success", .scram(var client, _)):
            if !client.isAuthenticated {
                do {
                    try client.receive(serverFinal: data)
                } catch {
                    return abort(.scram(error))
                }
            }
            return authenticationSucceeded(client.saltedPassword)
        case ("success", .plain):
            return authenticationSucceeded(nil)
        case ("failure", _):
            let condition = element.elements.first { $0.name != "text" }.map { SASLFailureCondition($0.name) }
            let text = element.child("text", namespace: XMPPNamespace.sasl)?.text
            return abort(.authenticationFailed(condition ?? SASLFailureCondition("undefined"), text: text))
        default:
            return fail(.protocolViolation("unexpected SASL <\(element.name)>"), condition: .notAuthorized)
        }
    }

    private mutating func authenticationSucceeded(_ salted: SCRAMClient.SaltedPassword?) -> [Action] {
        sasl = nil
        authenticated = true
        return [.authenticated(saltedPassword: salted)] + restart()
    }

    /// `<name xmlns=sasl mechanism=…>base64</name>`; `=` stands for an empty initial response (RFC 6120 §6.4.2).
    private static func saslElement(_ name: String, _ data: [UInt8], mechanism: String? = nil) -> XElement {
        let text = data.isEmpty ? (name == "auth" ? "=" : "") : Data(data).base64EncodedString()
        return XElement(name, namespace: XMPPNamespace.sasl, ["mechanism": mechanism], children: text.isEmpty ? [] : [.text(text)])
    }

    private static func base64(_ text: String) -> [UInt8]? {
        let compact = text.filter { !$0.isWhitespace }
        if compact.isEmpty || compact == "=" { return [] }
        return Data(base64Encoded: compact).map(Array.init)
    }

    // MARK: Resume, bind, enable

    private mutating func featuresAfterAuthentication(_ features: StreamFeatures) -> [Action] {
        featuresAfterAuthentication = features
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
            guard var management = resumption?.streamManagement else { return [] }
            let outcome: (confirmed: [Stanza], resend: [Stanza])
            do {
                outcome = try management.resumed(h: h)
            } catch {
                return failHandledCountTooHigh(error)
            }
            streamManagement = management
            jid = resumption?.jid
            resumption = nil
            return (outcome.confirmed.isEmpty ? [] : [.acknowledged(outcome.confirmed)])
                + [.resumed(resend: outcome.resend)] + outcome.resend.map(Action.send) + established()
        case (.resuming, .failed(_, let h)):
            let outcome: (confirmed: [Stanza], unknown: [Stanza]) = resumption?.streamManagement.resumeFailed(h: h) ?? ([], [])
            resumption = nil
            let report: [Action] = (outcome.confirmed.isEmpty ? [] : [.acknowledged(outcome.confirmed)])
                + [.resumeFailed(unknown: outcome.unknown)]
            return report + bind(featuresAfterAuthentication!)
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

    private mutating func established() -> [Action] {
        state = .connected
        negotiationStarted = nil
        let early = beforeEnabled
        beforeEnabled = []
        uncounted += early.count   // each yields one deliver or handledHere, hence one handled() call
        return (jid.map { [.established($0)] } ?? []) + early.flatMap { receivedWhileConnected($0) }
    }
}
