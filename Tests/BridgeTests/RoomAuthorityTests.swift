@testable import Bridge
import IsthmusCommon
import Matrix
import MatrixClient
import Testing

/// Who may manage a room's bridge, from literal room state (the power rules of self-service linking).
@Suite struct RoomAuthorityTests {
    let alice = UserID("@alice:localhost")!
    let bob = UserID("@bob:localhost")!
    let carol = UserID("@carol:localhost")!

    func create(version: String, sender: UserID, additional: [UserID] = []) -> RoomStateEvent {
        var content: [String: JSONValue] = ["room_version": .string(version)]
        if !additional.isEmpty { content["additional_creators"] = .array(additional.map { .string($0.rawValue) }) }
        return RoomStateEvent(type: "m.room.create", sender: sender.rawValue, content: .object(content))
    }

    func powerLevels(users: [UserID: Int64], stateDefault: Int64? = nil, usersDefault: Int64? = nil) -> RoomStateEvent {
        var content: [String: JSONValue] = ["users": .object(Dictionary(uniqueKeysWithValues: users.map { ($0.key.rawValue, .integer($0.value)) }))]
        if let stateDefault { content["state_default"] = .integer(stateDefault) }
        if let usersDefault { content["users_default"] = .integer(usersDefault) }
        return RoomStateEvent(type: "m.room.power_levels", sender: alice.rawValue, content: .object(content))
    }

    @Test func inRoomVersion12TheCreatorsMayWithoutBeingListed() {
        let authority = RoomAuthority(state: [create(version: "12", sender: alice, additional: [carol]),
                                              powerLevels(users: [bob: 0])])
        #expect(authority.creators == [alice, carol])
        #expect(authority.mayManageBridge(alice) == nil)
        #expect(authority.mayManageBridge(carol) == nil)
        #expect(authority.mayManageBridge(bob) == .tooLow(have: 0, need: 50))
    }

    @Test func theLevelMustReachStateDefault() {
        let authority = RoomAuthority(state: [create(version: "12", sender: alice),
                                              powerLevels(users: [bob: 50, carol: 49])])
        #expect(authority.mayManageBridge(bob) == nil)
        #expect(authority.mayManageBridge(carol) == .tooLow(have: 49, need: 50))
        let raised = RoomAuthority(state: [create(version: "12", sender: alice), powerLevels(users: [bob: 50], stateDefault: 75)])
        #expect(raised.mayManageBridge(bob) == .tooLow(have: 50, need: 75))
        let everyone = RoomAuthority(state: [create(version: "12", sender: alice), powerLevels(users: [:], usersDefault: 50)])
        #expect(everyone.mayManageBridge(carol) == nil)
    }

    @Test func beforeVersion12ACreatorNeedsTheLevelLikeAnyoneElse() {
        // Demoted creator of a version 10 room.
        let authority = RoomAuthority(state: [create(version: "10", sender: alice), powerLevels(users: [alice: 0, bob: 100])])
        #expect(!authority.creatorsArePrivileged)
        #expect(authority.mayManageBridge(alice) == .tooLow(have: 0, need: 50))
        #expect(authority.mayManageBridge(bob) == nil)
        #expect(RoomAuthority(roomVersion: "org.matrix.hydra.11").creatorsArePrivileged)
        #expect(RoomAuthority(roomVersion: "13").creatorsArePrivileged)
    }

    @Test func withoutPowerLevelsOnlyTheCreatorMay() {
        let authority = RoomAuthority(state: [create(version: "10", sender: alice)])
        #expect(authority.mayManageBridge(alice) == nil)
        #expect(authority.mayManageBridge(bob) == .notCreator)
    }

    @Test func theOwnerReadsNamesNotIDs() {
        let state = [
            create(version: "12", sender: alice),
            RoomStateEvent(type: "m.room.name", sender: alice.rawValue, content: .object(["name": .string("Lounge")])),
            RoomStateEvent(type: "m.room.canonical_alias", sender: alice.rawValue, content: .object(["alias": .string("#lounge:localhost")])),
            RoomStateEvent(type: "m.room.member", stateKey: alice.rawValue, sender: alice.rawValue,
                           content: .object(["membership": .string("join"), "displayname": .string("Alice\u{7} Liddell ")])),
        ]
        let authority = RoomAuthority(state: state)
        #expect(authority.label == "“Lounge” (#lounge:localhost)")
        #expect(authority.displayname(of: alice) == "Alice Liddell")
        #expect(authority.displayname(of: bob) == "bob")
        #expect(RoomAuthority().label == "(a room without a name or public address)")
        #expect(RoomAuthority(canonicalAlias: RoomAlias("#x:localhost")).label == "#x:localhost")
    }
}
