import IsthmusCommon

/// The room's ownership belongs to the bridge's occupant (`isthmus@<component>`), never to the component's domain JID.
///
/// Earlier versions joined as the domain JID (`<component>/isthmus`), so the rooms they created have the domain as
/// owner. ejabberd looks an occupant's affiliation up by bare JID and then by domain (mod_muc_room
/// `do_get_affiliation_fallback`), so there every Matrix user's occupant (`alice\3aexample.org@<component>`) would
/// inherit that ownership. After the bot's occupant joins, once per portal, the room is asked (XEP-0045 §10.6, §10.7)
/// to make the bot's bare JID owner and then to take the domain's affiliation away. Who asks first depends on the
/// affiliation the join presence gave the bot:
///
/// - owner: the bot asks itself. On ejabberd this may be the domain's ownership seen through the fallback, so the grant
///   makes it the bot's own before the domain's goes; elsewhere it changes nothing.
/// - anything else: the domain JID asks (a component may send from its domain; servers check the asker's affiliation
///   by bare JID and do not need it to be an occupant). A refusal means the domain owns nothing here: nothing to do.
///
/// The removal is always asked by the bot, owner by then. A room the join created needs nothing (the bot is its
/// owner under its own JID), and a self-presence without an affiliation (XEP-0045 requires one) gives nothing to go on.
extension PortalStateMachine {
    /// Who asks the room to make the bot's bare JID owner.
    struct OwnershipHandover: Sendable, Equatable {
        enum Grantor: Sendable, Equatable {
            /// The bridge's occupant, which the room says is owner already.
            case bot
            /// The component's domain JID, owner of the rooms the bridge created before its occupant had a localpart.
            case domain
        }
        var grantor: Grantor
    }

    /// How a handover ended.
    enum OwnershipOutcome: Sendable, Equatable {
        /// The bot's bare JID is owner and the domain JID has no affiliation.
        case settled
        /// The grant was refused: the grantor is not the room's owner.
        case grantRefused(StanzaErrorInfo)
        /// The bot is owner, but the room refused to take the domain's affiliation away.
        case removalRefused(StanzaErrorInfo)
        /// The XMPP side did not answer (or was down): asked again at the next activation.
        case failed(XMPPFailure)
    }

    /// The decision (pure): who grants the bot ownership, given the affiliation its join presence showed.
    static func ownershipHandover(botAffiliation: MUCAffiliation) -> OwnershipHandover {
        OwnershipHandover(grantor: botAffiliation == .owner ? .bot : .domain)
    }

    /// After the bot's occupant joined: the handover, unless it was settled before or there is nothing to decide on.
    mutating func settleOwnership(created: Bool, affiliation: MUCAffiliation?) -> [Action] {
        if created { ownershipSettled = true }
        guard !ownershipSettled, let affiliation else { return [] }
        return [.settleOwnership(Self.ownershipHandover(botAffiliation: affiliation))]
    }

    /// The handover's outcome: logged; settled for the portal's life unless the XMPP side did not answer.
    mutating func ownershipSettled(_ handover: OwnershipHandover, _ outcome: OwnershipOutcome) -> [Action] {
        switch outcome {
        case .settled:
            ownershipSettled = true
            if handover.grantor == .domain {
                return [.log(LogEntry(level: .notice, message: "Took the MUC's ownership over from the component's domain JID",
                                      metadata: ["xmpp.muc": configuration.muc.description]))]
            }
            return [.log(LogEntry(level: .debug, message: "The component's domain JID holds no affiliation in the MUC"))]
        case .grantRefused(let error):
            ownershipSettled = true
            let level: Logger.Level = handover.grantor == .domain ? .debug : .warning
            return [.log(LogEntry(level: level, message: "The MUC refused to make the bridge's occupant its owner",
                                  metadata: ["xmpp.error": error.condition.rawValue, "xmpp.asker": "\(handover.grantor)"]))]
        case .removalRefused(let error):
            ownershipSettled = true
            return [.log(LogEntry(level: .warning, message: "The MUC refused to take the component's domain JID's affiliation away",
                                  metadata: ["xmpp.error": error.condition.rawValue]))]
        case .failed(let failure):
            return [.log(LogEntry(level: .info, message: "Could not settle the MUC's ownership; trying again at the next activation",
                                  metadata: ["error": "\(failure)"]))]
        }
    }
}
