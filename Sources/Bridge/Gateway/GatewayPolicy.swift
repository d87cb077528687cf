import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import XMPP

/// Whether an alias query may open (or reach) a MUC: the gateway's rules as pure functions of what is known, so that
/// each refusal is tested without servers.
public enum GatewayPolicy {
    /// Why an alias answers 404. Each has a fixed label (metrics) and a sentence (the log).
    public enum Refusal: Sendable, Equatable {
        /// `gateway.matrix_aliases` is off.
        case disabled
        /// The MUC's service is not in `gateway.allowed_muc_domains`.
        case domainNotAllowed
        /// `gateway.max_dynamic_rooms` dynamic links exist already.
        case tooManyRooms
        /// `gateway.max_opens_per_minute` rooms were opened in the last minute.
        case rateLimited
        /// The MUC is linked with a room that is not public: its gateway alias would expose a private room.
        case linkedPrivately
        /// The MUC's link is being removed.
        case closing
        /// The MUC does not exist (disco#info: `item-not-found`), or the address is not a chat room.
        case noSuchRoom
        /// The MUC admits only members, or wants a password: the bridge could not enter it.
        case closedRoom
        /// The MUC or its server did not answer, or answered with another error.
        case unreachable
        /// The homeserver refused to make the room or the alias.
        case homeserverRefused
        /// The bridge could not enter the MUC once the room was made (the room was closed again).
        case joinFailed

        public var label: String {
            switch self {
            case .disabled: "disabled"
            case .domainNotAllowed: "domain_not_allowed"
            case .tooManyRooms: "too_many_rooms"
            case .rateLimited: "rate_limited"
            case .linkedPrivately: "linked_privately"
            case .closing: "closing"
            case .noSuchRoom: "no_such_room"
            case .closedRoom: "closed_room"
            case .unreachable: "unreachable"
            case .homeserverRefused: "homeserver_refused"
            case .joinFailed: "join_failed"
            }
        }

        public var reason: String {
            switch self {
            case .disabled: "gateway.matrix_aliases is off"
            case .domainNotAllowed: "the MUC service is not in gateway.allowed_muc_domains"
            case .tooManyRooms: "gateway.max_dynamic_rooms rooms are open already"
            case .rateLimited: "gateway.max_opens_per_minute rooms were opened in the last minute"
            case .linkedPrivately: "the MUC is linked with a Matrix room that is not public"
            case .closing: "the MUC's link is being removed"
            case .noSuchRoom: "the MUC does not exist"
            case .closedRoom: "the MUC is members-only or password-protected"
            case .unreachable: "the MUC did not answer"
            case .homeserverRefused: "the homeserver refused the room or its alias"
            case .joinFailed: "the bridge could not enter the MUC"
            }
        }
    }

    /// What an alias query for `muc` does before asking anyone: nil when it may go on to probe the MUC (or, with
    /// `existing`, to point the alias at that link's room). `opensInLastMinute`: rooms this process opened in the
    /// last 60 s. `existing`: the MUC's current link, if any; `existingIsPublic`: whether its room is public (only asked
    /// for static links).
    public static func refusal(for muc: JID, settings: Config.Gateway, existing: RoomLink?, existingIsPublic: Bool,
                               dynamicRooms: Int, opensInLastMinute: Int) -> Refusal? {
        guard settings.matrixAliases else { return .disabled }
        if let allowed = settings.allowedMUCDomains, !allowed.contains(muc.domain) { return .domainNotAllowed }
        if let existing {
            if existing.unlinking { return .closing }
            return existing.kind == .dynamic || existingIsPublic ? nil : .linkedPrivately
        }
        if dynamicRooms >= settings.maxDynamicRooms { return .tooManyRooms }
        if opensInLastMinute >= settings.maxOpensPerMinute { return .rateLimited }
        return nil
    }

    /// Whether the bridge may open a room for a MUC that answered disco#info with `features`.
    public static func refusal(probed features: RoomFeatures) -> Refusal? {
        guard features.isRoom else { return .noSuchRoom }
        return features.entry == .open ? nil : .closedRoom
    }

    /// The refusal a failed disco#info stands for.
    public static func refusal(probeError error: any Error) -> Refusal {
        if case XMPPLinkError.stanzaError(let info) = error,
           [StanzaErrorCondition.itemNotFound, .remoteServerNotFound].contains(info.condition) {
            return .noSuchRoom
        }
        return .unreachable
    }

    /// What to do with a dynamic link's idle mark, given whether its Matrix room has a Matrix member now.
    public enum IdleStep: Sendable, Equatable {
        case nothing
        /// It has had no Matrix member since `now`.
        case markIdle
        /// It has one again.
        case clearIdle
        /// It has had none for `gateway.idle_days`: unlink it and close its room.
        case close
    }

    /// The idle step for `link` (static links are never closed).
    public static func idleStep(_ link: RoomLink, hasMatrixMember: Bool, now: Date, idleDays: Int) -> IdleStep {
        guard link.kind == .dynamic, !link.unlinking else { return .nothing }
        if hasMatrixMember { return link.idleSince == nil ? .nothing : .clearIdle }
        guard let since = link.idleSince else { return .markIdle }
        return now.timeIntervalSince(since) >= Double(idleDays) * 86_400 ? .close : .nothing
    }
}
