@testable import Bridge
import Foundation
import IsthmusCommon
import Testing

/// The read-modify-write of `m.room.power_levels` for ghosts: nothing else touched, the bot's power respected.
@Suite struct GhostPowerLevelsTests {
    let bot = UserID("@isthmus:localhost")!
    let alice = UserID("@alice:localhost")!
    let romeo = UserID("@_xmpp_romeo:localhost")!
    let juliet = UserID("@_xmpp_juliet:localhost")!
    let isGhost: (UserID) -> Bool = { $0.localpart.hasPrefix("_xmpp_") }

    func state(users: [String: Int64], extra: [String: JSONValue] = [:], version: String = "10",
               creators: Set<UserID> = []) -> RoomPowerState {
        var content: [String: JSONValue] = ["users": .object(users.mapValues { .integer($0) })]
        content.merge(extra) { _, new in new }
        return RoomPowerState(roomVersion: version, creators: creators.isEmpty ? [alice] : creators, powerLevels: .object(content))
    }

    @Test func levelsAreSetAndEverythingElseIsKept() {
        let extra: [String: JSONValue] = ["notifications": .object(["room": .integer(20)]), "events": .object(["m.room.name": .integer(50)]),
                                          "users_default": .integer(0), "org.example.custom": .string("kept")]
        let plan = GhostPowerLevels(wanted: [romeo: 50]).plan(state(users: [bot.rawValue: 100, alice.rawValue: 100], extra: extra),
                                                              bot: bot, isGhost: isGhost)
        var expected = extra
        expected["users"] = .object([bot.rawValue: .integer(100), alice.rawValue: .integer(100), romeo.rawValue: .integer(50)])
        #expect(plan == .update(.object(expected), capped: [], untouchable: []))
    }

    @Test func ghostsNotWantedLoseTheirLevelOthersKeepTheirs() {
        let plan = GhostPowerLevels(wanted: [:]).plan(state(users: [bot.rawValue: 100, alice.rawValue: 50, romeo.rawValue: 50]),
                                                      bot: bot, isGhost: isGhost)
        #expect(plan == .update(.object(["users": .object([bot.rawValue: .integer(100), alice.rawValue: .integer(50)])]),
                                capped: [], untouchable: []))
        #expect(GhostPowerLevels(wanted: [romeo: 50]).plan(state(users: [bot.rawValue: 100, romeo.rawValue: 50]), bot: bot,
                                                           isGhost: isGhost) == .unchanged)
    }

    @Test func neverAtOrAboveTheBotAndNeverTouchingThoseAtOrAboveIt() {
        // The bot has 50: an owner's ghost gets 49; a ghost a Matrix admin raised to 60 is left alone.
        let plan = GhostPowerLevels(wanted: [romeo: 100]).plan(state(users: [bot.rawValue: 50, juliet.rawValue: 60], extra: ["state_default": .integer(50)]),
                                                               bot: bot, isGhost: isGhost)
        #expect(plan == .update(.object(["users": .object([bot.rawValue: .integer(50), juliet.rawValue: .integer(60), romeo.rawValue: .integer(49)]),
                                         "state_default": .integer(50)]),
                                capped: [romeo], untouchable: [juliet]))
    }

    @Test func aBotThatIsACreatorOfAVersion12RoomHasNoCeiling() {
        let plan = GhostPowerLevels(wanted: [romeo: 100]).plan(state(users: [alice.rawValue: 100], version: "12", creators: [alice, bot]),
                                                               bot: bot, isGhost: isGhost)
        #expect(plan == .update(.object(["users": .object([alice.rawValue: .integer(100), romeo.rawValue: .integer(100)])]),
                                capped: [], untouchable: []))
    }

    @Test func withoutPowerNothingIsSent() {
        #expect(GhostPowerLevels(wanted: [romeo: 50]).plan(state(users: [bot.rawValue: 0]), bot: bot, isGhost: isGhost)
                == .noPower(have: 0, need: 50))
        let stricter = state(users: [bot.rawValue: 50], extra: ["events": .object(["m.room.power_levels": .integer(100)])])
        #expect(GhostPowerLevels(wanted: [romeo: 50]).plan(stricter, bot: bot, isGhost: isGhost) == .noPower(have: 50, need: 100))
        #expect(GhostPowerLevels(wanted: [romeo: 50]).plan(RoomPowerState(powerLevels: nil), bot: bot, isGhost: isGhost)
                == .noPower(have: nil, need: 50))
    }

    @Test func rolesGiveTheHighestConfiguredLevel() {
        let levels = RoleLevels()
        #expect(GhostPowerLevels.level(affiliation: .owner, role: .moderator, levels: levels) == 100)
        #expect(GhostPowerLevels.level(affiliation: .admin, role: .moderator, levels: levels) == 50)
        #expect(GhostPowerLevels.level(affiliation: .member, role: .moderator, levels: levels) == 50)
        #expect(GhostPowerLevels.level(affiliation: .member, role: .participant, levels: levels) == nil)
        #expect(GhostPowerLevels.level(affiliation: MUCAffiliation.none, role: .visitor, levels: levels) == nil)
        #expect(GhostPowerLevels.level(affiliation: .admin, role: .moderator, levels: RoleLevels(owner: 100, admin: 40, moderator: 60)) == 60)
    }
}
