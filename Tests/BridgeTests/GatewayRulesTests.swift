import Bridge
import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import Matrix
import Testing
import XMPP

/// The gateway's pure parts: what an alias names, when an alias query is refused, when an idle room closes, and what
/// the third-party lookups answer.
@Suite struct GatewayRulesTests {
    let aliases = GatewayAliases(prefix: "_xmpp_", serverName: "example.org")

    func alias(_ text: String) -> RoomAlias { RoomAlias(text)! }

    @Test func anAliasNamesTheMUCSplitAtItsLastUnderscore() {
        #expect(aliases.muc(for: alias("#_xmpp_lounge_conference.example.org:example.org")) == JID("lounge@conference.example.org"))
        #expect(aliases.muc(for: alias("#_xmpp_tea_and_cake_muc.example.net:example.org")) == JID("tea_and_cake@muc.example.net"))
    }

    @Test func anyCaseNamesTheSameMUC() {
        let lower = aliases.muc(for: alias("#_xmpp_lounge_conference.example.org:example.org"))
        #expect(aliases.muc(for: alias("#_xmpp_Lounge_Conference.Example.org:example.org")) == lower)
        #expect(aliases.muc(for: alias("#_XMPP_LOUNGE_CONFERENCE.EXAMPLE.ORG:example.org")) == lower)
    }

    @Test func whatIsNotAGatewayAliasNamesNothing() {
        #expect(aliases.muc(for: alias("#_xmpp_lounge_conference.example.org:other.org")) == nil, "another homeserver")
        #expect(aliases.muc(for: alias("#lounge_conference.example.org:example.org")) == nil, "no prefix")
        #expect(aliases.muc(for: alias("#_xmpp_lounge:example.org")) == nil, "no domain")
        #expect(aliases.muc(for: alias("#_xmpp__conference.example.org:example.org")) == nil, "no room")
        #expect(aliases.muc(for: alias("#_xmpp_lounge_:example.org")) == nil, "an empty domain")
        #expect(aliases.muc(for: alias("#_xmpp_a@b_conference.example.org:example.org")) == nil, "not a JID localpart")
    }

    @Test func theAliasOfAMUCRoundTrips() {
        let muc = JID("Tea_Time@Conference.example.org")!
        let made = aliases.alias(for: muc)
        #expect(made == alias("#_xmpp_tea_time_conference.example.org:example.org"))
        #expect(made.flatMap(aliases.muc(for:)) == muc)
        #expect(aliases.alias(for: JID("conference.example.org")!) == nil, "a service is not a room")
    }

    // MARK: Refusals

    func settings(_ change: (inout Config.Gateway) -> Void = { _ in }) -> Config.Gateway {
        var gateway = Config.Gateway()
        gateway.matrixAliases = true
        change(&gateway)
        return gateway
    }

    let muc = JID("lounge@conference.example.org")!

    func link(_ kind: RoomLink.Kind, unlinking: Bool = false, idleSince: Date? = nil) -> RoomLink {
        RoomLink(matrixRoom: RoomID("!r:example.org")!, matrixAlias: nil, muc: muc, unlinking: unlinking, kind: kind, idleSince: idleSince)
    }

    @Test func aNewMUCMayBeOpenedWithinTheLimits() {
        #expect(GatewayPolicy.refusal(for: muc, settings: settings(), existing: nil, existingIsPublic: false, dynamicRooms: 0,
                                      opensInLastMinute: 0) == nil)
    }

    @Test func eachLimitRefuses() {
        func refusal(_ gateway: Config.Gateway, rooms: Int = 0, opens: Int = 0) -> GatewayPolicy.Refusal? {
            GatewayPolicy.refusal(for: muc, settings: gateway, existing: nil, existingIsPublic: false, dynamicRooms: rooms, opensInLastMinute: opens)
        }
        #expect(refusal(settings { $0.matrixAliases = false }) == .disabled)
        #expect(refusal(settings { $0.allowedMUCDomains = ["muc.example.net"] }) == .domainNotAllowed)
        #expect(refusal(settings { $0.allowedMUCDomains = ["conference.example.org"] }) == nil)
        #expect(refusal(settings { $0.maxDynamicRooms = 2 }, rooms: 2) == .tooManyRooms)
        #expect(refusal(settings { $0.maxOpensPerMinute = 3 }, opens: 3) == .rateLimited)
        #expect(refusal(settings { $0.maxOpensPerMinute = 3 }, opens: 2) == nil)
    }

    @Test func aLinkedMUCIsReachedThroughItsRoomUnlessThatRoomIsPrivate() {
        func refusal(_ existing: RoomLink, isPublic: Bool) -> GatewayPolicy.Refusal? {
            // Past every limit: an existing room costs nothing new.
            GatewayPolicy.refusal(for: muc, settings: settings { $0.maxDynamicRooms = 0 }, existing: existing, existingIsPublic: isPublic,
                                  dynamicRooms: 5, opensInLastMinute: 100)
        }
        #expect(refusal(link(.dynamic), isPublic: false) == nil)
        #expect(refusal(link(.static), isPublic: true) == nil)
        #expect(refusal(link(.static), isPublic: false) == .linkedPrivately)
        #expect(refusal(link(.dynamic, unlinking: true), isPublic: true) == .closing)
    }

    @Test func onlyAnOpenChatRoomIsOpened() {
        var features = RoomFeatures(stanzaIDs: true, archive: true)
        #expect(GatewayPolicy.refusal(probed: features) == nil)
        features.entry = .membersOnly
        #expect(GatewayPolicy.refusal(probed: features) == .closedRoom)
        features.entry = .passwordProtected
        #expect(GatewayPolicy.refusal(probed: features) == .closedRoom)
        features = RoomFeatures(stanzaIDs: false, archive: false)
        features.isRoom = false
        #expect(GatewayPolicy.refusal(probed: features) == .noSuchRoom)
        #expect(GatewayPolicy.refusal(probeError: XMPPLinkError.stanzaError(.init(condition: .itemNotFound))) == .noSuchRoom)
        #expect(GatewayPolicy.refusal(probeError: XMPPLinkError.stanzaError(.init(condition: .remoteServerNotFound))) == .noSuchRoom)
        #expect(GatewayPolicy.refusal(probeError: XMPPLinkError.timeout) == .unreachable)
    }

    @Test func aRoomWithoutMatrixMembersClosesAfterTheIdleDays() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        #expect(GatewayPolicy.idleStep(link(.dynamic), hasMatrixMember: true, now: now, idleDays: 7) == .nothing)
        #expect(GatewayPolicy.idleStep(link(.dynamic), hasMatrixMember: false, now: now, idleDays: 7) == .markIdle)
        let sixDays = now.addingTimeInterval(-6 * 86_400), sevenDays = now.addingTimeInterval(-7 * 86_400)
        #expect(GatewayPolicy.idleStep(link(.dynamic, idleSince: sixDays), hasMatrixMember: false, now: now, idleDays: 7) == .nothing)
        #expect(GatewayPolicy.idleStep(link(.dynamic, idleSince: sevenDays), hasMatrixMember: false, now: now, idleDays: 7) == .close)
        #expect(GatewayPolicy.idleStep(link(.dynamic, idleSince: sevenDays), hasMatrixMember: true, now: now, idleDays: 7) == .clearIdle)
        #expect(GatewayPolicy.idleStep(link(.static, idleSince: sevenDays), hasMatrixMember: false, now: now, idleDays: 7) == .nothing,
                "a room someone linked is never closed")
        #expect(GatewayPolicy.idleStep(link(.dynamic, unlinking: true, idleSince: sevenDays), hasMatrixMember: false, now: now, idleDays: 7) == .nothing)
    }

    // MARK: Third-party lookups

    @Test func theProtocolAndItsLocationsAreTheGatewayAliases() {
        let directory = GatewayDirectory(aliases: aliases, settings: settings { $0.allowedMUCDomains = ["conference.example.org"] })
        #expect(directory.protocolDescription("xmpp")?.location_fields == ["muc"])
        #expect(directory.protocolDescription("irc") == nil)
        let expected = [ThirdPartyLocation(alias: alias("#_xmpp_lounge_conference.example.org:example.org"), protocol: "xmpp",
                                           fields: ["muc": "lounge@conference.example.org"])]
        #expect(directory.locations(protocol: "xmpp", fields: ["muc": "Lounge@conference.example.org"]) == expected)
        #expect(directory.locations(protocol: nil, fields: ["alias": "#_xmpp_LOUNGE_conference.example.org:example.org"]) == expected)
        #expect(directory.locations(protocol: "xmpp", fields: ["muc": "lounge@muc.example.net"]).isEmpty, "not an allowed service")
        #expect(directory.locations(protocol: "xmpp", fields: ["muc": "conference.example.org"]).isEmpty, "not a room")
        #expect(directory.locations(protocol: "xmpp", fields: ["muc": "not a jid"]).isEmpty)
        #expect(directory.locations(protocol: "irc", fields: ["muc": "lounge@conference.example.org"]).isEmpty)
        #expect(directory.locations(protocol: nil, fields: ["alias": "#other:example.org"]).isEmpty)
    }
}
