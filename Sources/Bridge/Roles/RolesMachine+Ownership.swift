import IsthmusCommon

/// The room's ownership belongs to the bridge's occupant (`isthmus@<component>`), never to the component's domain JID.
///
/// Earlier versions joined as the domain JID (`<component>/isthmus`), so the rooms they created have the domain as
/// owner. ejabberd looks an occupant's affiliation up by bare JID and then by domain (mod_muc_room
/// `do_get_affiliation_fallback`), so there every Matrix user's occupant (`alice\3aexample.org@<component>`) would
/// inherit that ownership. After the bot's occupant joins, once per portal and before anything else, the room is asked
/// (XEP-0045 §10.3–10.7) to make the bot's bare JID owner and to take the domain's affiliation away. What is asked
/// depends on the affiliation the bot's join presence showed:
///
/// - not owner: the domain JID grants the bot ownership (a component may send from its domain; the servers check the
///   asker's affiliation by bare JID and do not need it to be an occupant), then the bot removes the domain. A refused
///   grant means the domain owns nothing here: nothing to do.
/// - owner: the bot reads the owner and admin lists. Listed itself (or the domain not an owner), it removes the domain
///   where the domain is listed. Not listed while the domain is an owner, its ownership is ejabberd's fallback from the
///   domain, and ejabberd ignores a grant of what the fallback already gives: the bot makes itself admin (an entry of
///   its own), the domain makes it owner, then the bot removes the domain.
///
/// A room the join created needs nothing (the bot is its owner under its own JID), and a self-presence without an
/// affiliation (XEP-0045 requires one) gives nothing to go on.
extension RolesMachine {
    /// The two JIDs the handover is about.
    enum OwnershipParty: Sendable, Equatable {
        /// The bridge's occupant (its bare JID when it is the subject).
        case bot
        /// The component's bare domain JID.
        case domain
    }

    /// Affiliation changes, made in order; the first failure ends them.
    struct OwnershipPlan: Sendable, Equatable {
        struct Change: Sendable, Equatable {
            var of: OwnershipParty
            var to: MUCAffiliation
            var askedBy: OwnershipParty
        }
        var changes: [Change]
        /// The first change finds out whether the domain owns the room: its refusal means there is nothing to hand over.
        var probing = false

        /// The bot does not own the room: the domain, if it does, hands it over.
        static let handOver = OwnershipPlan(changes: [Change(of: .bot, to: .owner, askedBy: .domain),
                                                      Change(of: .domain, to: .none, askedBy: .bot)], probing: true)
    }

    /// Who the room's owner and admin lists name, as the bot read them.
    struct OwnershipLists: Sendable, Equatable {
        var botOwner: Bool
        var domainOwner: Bool
        var domainAdmin: Bool
    }

    /// A plan's change that failed (its index) and how.
    struct OwnershipFailure: Sendable, Equatable {
        var step: Int
        var failure: XMPPFailure
    }

    /// The decision once the bot owns the room (pure): nothing, or the changes that leave the domain without an
    /// affiliation and the bot owner under its own JID.
    static func ownershipPlan(_ lists: OwnershipLists) -> OwnershipPlan? {
        guard lists.domainOwner || lists.domainAdmin else { return nil }
        let removal = OwnershipPlan.Change(of: .domain, to: .none, askedBy: .bot)
        if lists.botOwner || !lists.domainOwner { return OwnershipPlan(changes: [removal]) }
        return OwnershipPlan(changes: [OwnershipPlan.Change(of: .bot, to: .admin, askedBy: .bot),
                                       OwnershipPlan.Change(of: .bot, to: .owner, askedBy: .domain), removal])
    }

    /// After the bot's occupant joined: the first step of the handover, unless it was settled before or there is
    /// nothing to decide on.
    mutating func settleOwnership(created: Bool, affiliation: MUCAffiliation?) -> [Action] {
        if created { ownershipSettled = true }
        guard !ownershipSettled, let affiliation else { return [] }
        return affiliation == .owner ? [.readOwnership] : [.changeAffiliations(.handOver)]
    }

    /// The lists arrived (nil: they could not be read; asked again at the next activation).
    mutating func ownershipRead(_ lists: OwnershipLists?) -> [Action] {
        guard let lists else {
            return [.log(LogEntry(level: .info, message: "Could not read the MUC's owners; trying again at the next activation"))]
        }
        guard let plan = Self.ownershipPlan(lists) else {
            ownershipSettled = true
            return []
        }
        return [.changeAffiliations(plan)]
    }

    /// The plan's outcome: logged; settled for the portal's life unless a change after a probe failed.
    mutating func affiliationsChanged(_ plan: OwnershipPlan, _ failed: OwnershipFailure?, in room: Room) -> [Action] {
        guard let failed else {
            ownershipSettled = true
            return [.log(LogEntry(level: .notice, message: "Took the MUC's ownership over from the component's domain JID",
                                  metadata: ["xmpp.muc": room.muc.description]))]
        }
        if plan.probing, failed.step == 0, case .refused(let error) = failed.failure {
            ownershipSettled = true
            return [.log(LogEntry(level: .debug, message: "The component's domain JID does not own the MUC",
                                  metadata: ["xmpp.error": error.condition.rawValue]))]
        }
        let level: Logger.Level = failed.failure.isUnavailable ? .info : .warning
        return [.log(LogEntry(level: level, message: "Could not take the MUC's ownership over from the component's domain JID; "
                                  + "trying again at the next activation",
                              metadata: ["xmpp.muc": room.muc.description, "error": "\(failed.failure)",
                                         "xmpp.step": "\(failed.step + 1) of \(plan.changes.count)"]))]
    }
}
