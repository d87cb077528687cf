import IsthmusCommon
import IsthmusStore
import Testing
import TestSupport

/// Tier 2 over sockets: the whole bridge in-process (``LoopbackBridge``: `BridgeRuntime` with its XEP-0114 component,
/// appservice listener and Matrix client) against the fake MUC and homeserver that `isthmus-bench` uses. Each check
/// of "once" is read after a sentinel said later on the same side has arrived (per-room order holds), so a duplicate
/// would have arrived by then.
@Suite struct LoopbackBridgeTests {
    @Test func anOccupantsMessageReachesMatrixOnceAsItsGhost() async throws {
        try await LoopbackBridge.run { pair in
            try await pair.xmppSays("hello from xmpp")
            try await pair.xmppSays("sentinel x")
            #expect(try await pair.arrivedInMatrix(atLeast: 2) == ["hello from xmpp", "sentinel x"])
            let sent = pair.recorder.toMatrix.filter { $0.body != nil }
            #expect(sent.map(\.room) == [LoopbackBridge.room.rawValue, LoopbackBridge.room.rawValue])
            #expect(Set(sent.compactMap(\.userID)).count == 1, "both as romeo's one ghost: \(sent.map(\.userID))")
            #expect(sent.allSatisfy { $0.type == "m.room.message" && $0.byGhost })
            // The MUC reflected each message to both occupants the component hosts (bot and puppet): two copies each
            // reached the bridge, one went on.
            #expect(pair.muc.counters.copiesOut == 4)
        }
    }

    @Test func aMatrixMessageReachesTheMUCOnceAndItsReflectionIsTakenAsOurOwn() async throws {
        try await LoopbackBridge.run { pair in
            let event = await pair.nextEventID
            try await pair.matrixSays("hello from matrix")
            try await pair.matrixSays("sentinel m")
            #expect(try await pair.arrivedInXMPP(atLeast: 2) == ["hello from matrix", "sentinel m"])
            let sent = pair.recorder.toXMPP
            #expect(Set(sent.map(\.nick)).count == 1 && sent.first?.nick != "Matrix", "both from alice's puppet: \(sent.map(\.nick))")
            #expect(sent.allSatisfy { $0.room == LoopbackBridge.muc.description && $0.originID != nil })
            // The reflection came back with the room's stanza-id: the bridge recorded it for alice's event.
            let reflected = try #require(sent.first)
            let store = pair.store
            try await pair.waitFor("the reflection's stanza-id recorded for \(event.rawValue)") {
                let mapping = try await store.mapping(room: LoopbackBridge.room, eventID: event)
                return mapping?.stanzaID?.rawValue == reflected.stanzaID && mapping?.state == .delivered
        }
        // Nor did the reflection come back to Matrix: after an XMPP sentinel, only the sentinel arrived there.
        try await pair.xmppSays("sentinel x")
        #expect(try await pair.arrivedInMatrix(atLeast: 1) == ["sentinel x"])
        #expect(pair.recorder.toXMPP.count == 2)
        }
    }

    /// The scenario `FakeTierScenarioTests` runs over the in-memory links and `EndToEndTests.ScenarioTests` over real
    /// servers.
    @Test func textBothWaysOnce() async throws {
        try await LoopbackBridge.run { pair in
            try await BridgeScenarios.textBothWaysOnce(pair)
        }
    }
}
