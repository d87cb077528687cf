import Foundation
import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// The message map's rich-message columns (migration 5), the per-sender id lookups and the reactions table.
@Suite struct RichMessageMapTests {
    let room = RoomID("!room:localhost")!
    let other = RoomID("!other:localhost")!
    let alice = UserID("@alice:localhost")!
    let bob = UserID("@bob:localhost")!
    let romeo = MessageSender.occupant(.occupantID(OccupantID("occ-romeo")!))
    let juliet = MessageSender.occupant(.nick("juliet"))

    func event(_ id: String) -> EventID { EventID(id)! }

    /// An XMPP → Matrix message row.
    func fromXMPP(_ event: String, stanza: String, sender: MessageSender, id: String? = nil, origin: String? = nil,
                  kind: MessageMapping.Kind = .message, target: String? = nil) -> MessageMapping {
        MessageMapping(room: room, eventID: EventID(event), stanzaID: StanzaID(stanza), originID: origin.flatMap(OriginID.init),
                       direction: .xmppToMatrix, sender: sender, state: .delivered, kind: kind,
                       xmppID: id.flatMap(StanzaAttributeID.init), nick: "n", target: target.flatMap(EventID.init))
    }

    /// A Matrix → XMPP row being sent.
    func fromMatrix(_ event: String, user: UserID, origin: String, kind: MessageMapping.Kind = .message, target: String? = nil,
                    payload: String? = nil) -> MessageMapping {
        MessageMapping(room: room, eventID: EventID(event), stanzaID: nil, originID: OriginID(origin), direction: .matrixToXMPP,
                       sender: .matrix(user), state: .sending, body: "body", kind: kind, xmppID: StanzaAttributeID(origin),
                       nick: "Alice", target: target.flatMap(EventID.init), excerpt: "body", payload: payload)
    }

    // MARK: Migration 5

    @Test func migrationFiveAppliesToAVersionFourDatabaseWithRows() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("isthmus.sqlite")
        do {
            let connection = try SQLiteConnection(path: path)
            #expect(try Migrations.apply(Array(Migrations.all.filter { $0.version <= 4 }), to: Database(.sqlite(connection)))
                    == [1, 2, 3, 4])
            _ = try connection.run("""
                INSERT INTO message_map (matrix_room, event_id, stanza_id, origin_id, direction, sender, state, body)
                VALUES (?, ?, ?, ?, 'x2m', 'nick:romeo', 'delivered', NULL)
                """, room, event("$old1"), StanzaID("S-old")!, OriginID("o-old")!)
            _ = try connection.run("""
                INSERT INTO message_map (matrix_room, event_id, stanza_id, origin_id, direction, sender, state, body)
                VALUES (?, ?, NULL, ?, 'm2x', ?, 'sending', 'pending text')
                """, room, event("$old2"), OriginID("o-mine")!, alice.rawValue)
        }
        let store = try Store(path: path, logger: .disabled)
        #expect(try await store.appliedMigrations() == Migrations.all.map(\.version))
        let old = try #require(try await store.mapping(room: room, stanzaID: StanzaID("S-old")!))
        #expect(old.kind == .message)
        #expect(old.sender == .occupant(.nick("romeo")))
        #expect(old.xmppID == nil)
        #expect(old.nick == nil)
        #expect(old.target == nil)
        #expect(old.excerpt == nil)
        #expect(old.payload == nil)
        // A pending old row is still resent from its plain body.
        let pending = try await store.undeliveredMappings(room)
        #expect(pending.map(\.eventID) == [event("$old2")])
        #expect(pending.first?.kind == .message)
        #expect(pending.first?.body == "pending text")
        #expect(pending.first?.sender == .matrix(alice))
        // The new table is there and empty.
        #expect(try await store.reactions(room: room, target: event("$old1"), reactor: romeo).isEmpty)
    }

    // MARK: New columns and lookups

    @Test(arguments: StoreBackend.all) func twoXMPPSendersMayReuseAnOriginIDOnlyOursAreUnique(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let romeo = MessageSender.occupant(.nick("romeo")), juliet = MessageSender.occupant(.nick("juliet"))
        try await store.recordBridgedFromXMPP(fromXMPP("$x1", stanza: "s1", sender: romeo, origin: "same"))
        try await store.recordBridgedFromXMPP(fromXMPP("$x2", stanza: "s2", sender: juliet, origin: "same"))
        #expect(try await store.mapping(room: room, sender: romeo, originID: OriginID("same")!)?.eventID == event("$x1"))
        #expect(try await store.mapping(room: room, sender: juliet, originID: OriginID("same")!)?.eventID == event("$x2"))
        // Our own origin-ids stay unique, and the room-wide lookup finds only ours.
        #expect(try await store.mapping(room: room, originID: OriginID("same")!) == nil)
        #expect(try await store.insertMapping(fromMatrix("$m1", user: UserID("@alice:localhost")!, origin: "ours")))
        #expect(try await !store.insertMapping(fromMatrix("$m2", user: UserID("@alice:localhost")!, origin: "ours")))
        #expect(try await store.mapping(room: room, originID: OriginID("ours")!)?.eventID == event("$m1"))
    }

    /// The per-sender lookups find their row through a partial index on the id alone (a hostile stream of corrections
    /// or retractions with unknown ids must not scan the room's whole history), and only XMPP → Matrix rows pay for it.
    /// (SQLite's planner; PostgreSQL chooses by statistics, so a plan on a nearly empty table says nothing.)
    @Test func perSenderLookupsUseTheirPartialIndexes() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        func plan(_ sql: String) async throws -> String {
            try await store.read { db in try db.query("EXPLAIN QUERY PLAN " + sql, "x", "!r:l", "s") { $0.string(3) ?? "" } }.joined(separator: " | ")
        }
        let byID = try await plan("SELECT seq FROM message_map WHERE xmpp_id = ? AND direction = 'x2m' AND matrix_room = ? AND sender = ?")
        let byOrigin = try await plan("SELECT seq FROM message_map WHERE origin_id = ? AND direction = 'x2m' AND matrix_room = ? AND sender = ?")
        #expect(byID.contains("message_map_x2m_id"), "\(byID)")
        #expect(byOrigin.contains("message_map_x2m_origin"), "\(byOrigin)")
    }

    @Test(arguments: StoreBackend.all) func theNewColumnsRoundTrip(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let edit = fromMatrix("$edit", user: alice, origin: "o-edit", kind: .edit, target: "$orig", payload: #"{"body":"x"}"#)
        #expect(try await store.insertMapping(edit))
        var read = try #require(try await store.mapping(room: room, eventID: event("$edit")))
        #expect(read.seq > 0)
        read.seq = 0
        read.createdAt = .distantPast
        #expect(read == edit)
        for kind in [MessageMapping.Kind.message, .reaction, .retraction] {
            let row = fromXMPP("$k-\(kind.rawValue)", stanza: "S-\(kind.rawValue)", sender: romeo, id: "id-\(kind.rawValue)",
                               kind: kind, target: kind == .message ? nil : "$orig")
            try await store.recordBridgedFromXMPP(row)
            let back = try #require(try await store.mapping(room: room, stanzaID: StanzaID("S-\(kind.rawValue)")!))
            #expect(back.kind == kind)
            #expect(back.xmppID == StanzaAttributeID("id-\(kind.rawValue)"))
            #expect(back.nick == "n")
            #expect(back.target == row.target)
            #expect(back.sender == romeo)
        }
    }

    @Test(arguments: StoreBackend.all) func idAttributeAndOriginIDLookupsAreScopedToTheSender(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        try await store.recordBridgedFromXMPP(fromXMPP("$r1", stanza: "S1", sender: romeo, id: "same", origin: "o-same"))
        // juliet uses the same ids (they are only unique per sender).
        try await store.recordBridgedFromXMPP(fromXMPP("$j1", stanza: "S2", sender: juliet, id: "same", origin: "o-other"))
        #expect(try await store.mapping(room: room, sender: romeo, xmppID: StanzaAttributeID("same")!)?.eventID == event("$r1"))
        #expect(try await store.mapping(room: room, sender: juliet, xmppID: StanzaAttributeID("same")!)?.eventID == event("$j1"))
        #expect(try await store.mapping(room: room, sender: romeo, originID: OriginID("o-same")!)?.eventID == event("$r1"))
        // Another sender's origin-id is not found for this one (origin-ids are spoofable).
        #expect(try await store.mapping(room: room, sender: juliet, originID: OriginID("o-same")!) == nil)
        #expect(try await store.mapping(room: room, sender: .occupant(.nick("mallory")), xmppID: StanzaAttributeID("same")!) == nil)
        // Nor in another room.
        #expect(try await store.mapping(room: other, sender: romeo, xmppID: StanzaAttributeID("same")!) == nil)
        // Only XMPP senders' rows are looked up this way (Matrix edits name their original by event id): our own rows
        // are found by their origin-id alone.
        #expect(try await store.insertMapping(fromMatrix("$a1", user: alice, origin: "o-a1")))
        #expect(try await store.mapping(room: room, sender: .matrix(alice), xmppID: StanzaAttributeID("o-a1")!) == nil)
        #expect(try await store.mapping(room: room, originID: OriginID("o-a1")!)?.eventID == event("$a1"))
    }

    // MARK: Reactions

    @Test(arguments: StoreBackend.all) func aMatrixReactionIsRecordedWithItsMappingInOneCommit(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let target = event("$orig")
        let thumbs = Reaction(room: room, target: target, reactor: .matrix(alice), key: "👍", eventID: event("$re1"))
        let turtle = Reaction(room: room, target: target, reactor: .matrix(alice), key: "🐢", eventID: event("$re2"))
        #expect(try await store.insertMapping(fromMatrix("$re1", user: alice, origin: "o-re1", kind: .reaction, target: "$orig"),
                                              reaction: ReactionChange(added: [thumbs])))
        #expect(try await store.insertMapping(fromMatrix("$re2", user: alice, origin: "o-re2", kind: .reaction, target: "$orig"),
                                              reaction: ReactionChange(added: [turtle])))
        #expect(try await store.reactions(room: room, target: target, reactor: .matrix(alice)) == [thumbs, turtle])
        // Another reactor's set is separate.
        #expect(try await store.reactions(room: room, target: target, reactor: .matrix(bob)).isEmpty)
        #expect(try await store.reaction(room: room, eventID: event("$re2")) == turtle)
        #expect(try await store.reaction(room: other, eventID: event("$re2")) == nil)

        // A mapping that exists already changes nothing, also not the reactions.
        let again = Reaction(room: room, target: target, reactor: .matrix(alice), key: "🎉", eventID: event("$re1"))
        #expect(try await !store.insertMapping(fromMatrix("$re1", user: alice, origin: "o-re1", kind: .reaction, target: "$orig"),
                                               reaction: ReactionChange(added: [again])))
        #expect(try await store.reactions(room: room, target: target, reactor: .matrix(alice)).map(\.key) == ["👍", "🐢"])

        // The redaction of 👍 removes it with its own mapping.
        #expect(try await store.insertMapping(fromMatrix("$red", user: alice, origin: "o-red", kind: .reaction, target: "$orig"),
                                              reaction: ReactionChange(removed: [thumbs])))
        #expect(try await store.reactions(room: room, target: target, reactor: .matrix(alice)) == [turtle])
        #expect(try await store.reaction(room: room, eventID: event("$re1")) == nil)
    }

    @Test(arguments: StoreBackend.all) func anXMPPReactionSetIsRecordedWithItsMapping(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let target = event("$orig")
        let thumbs = Reaction(room: room, target: target, reactor: romeo, key: "👍", eventID: event("$g1"))
        let turtle = Reaction(room: room, target: target, reactor: romeo, key: "🐢", eventID: event("$g2"))
        try await store.recordBridgedFromXMPP(fromXMPP("$g1", stanza: "S-r1", sender: romeo, kind: .reaction, target: "$orig"),
                                              reactions: ReactionChange(added: [thumbs, turtle]))
        #expect(try await store.reactions(room: room, target: target, reactor: romeo) == [thumbs, turtle])
        #expect(try await store.reactions(room: room, target: target, reactor: juliet).isEmpty)
        #expect(try await store.mapping(room: room, stanzaID: StanzaID("S-r1")!)?.kind == .reaction)
        #expect(try await store.lastStanzaID(room) == StanzaID("S-r1"))
        // A ghost's reaction event is found with its occupant reactor (not a Matrix user's: it is not re-sent to XMPP).
        let found = try #require(try await store.reaction(room: room, eventID: event("$g2")))
        #expect(found.reactor == romeo)
        #expect(found.reactor.matrixUser == nil)
        // The next set drops 👍.
        try await store.recordBridgedFromXMPP(fromXMPP("$g3", stanza: "S-r2", sender: romeo, kind: .reaction, target: "$orig"),
                                              reactions: ReactionChange(removed: [thumbs]))
        #expect(try await store.reactions(room: room, target: target, reactor: romeo) == [turtle])
    }

    @Test(arguments: StoreBackend.all) func deletingARoomsMappingsAlsoDeletesItsReactions(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        let mine = Reaction(room: room, target: event("$orig"), reactor: .matrix(alice), key: "👍", eventID: event("$re1"))
        let elsewhere = Reaction(room: other, target: event("$orig"), reactor: .matrix(alice), key: "👍", eventID: event("$re9"))
        #expect(try await store.insertMapping(fromMatrix("$re1", user: alice, origin: "o-re1", kind: .reaction, target: "$orig"),
                                              reaction: ReactionChange(added: [mine])))
        var otherRow = fromMatrix("$re9", user: alice, origin: "o-re9", kind: .reaction, target: "$orig")
        otherRow.room = other
        #expect(try await store.insertMapping(otherRow, reaction: ReactionChange(added: [elsewhere])))
        try await store.deleteMappings(room)
        #expect(try await store.reactions(room: room, target: event("$orig"), reactor: .matrix(alice)).isEmpty)
        #expect(try await store.reaction(room: room, eventID: event("$re1")) == nil)
        #expect(try await store.mapping(room: room, eventID: event("$re1")) == nil)
        #expect(try await store.reactions(room: other, target: event("$orig"), reactor: .matrix(alice)) == [elsewhere])
    }

    // MARK: A burst's records

    /// Issue 26: what a portal gathered in a burst — reflections and XMPP messages, interleaved — is one commit, as if
    /// each were recorded in turn: ours delivered once, theirs mapped (an archived copy of one once), their reaction
    /// changes applied, and the resume point at the last record with a stanza-id. On PostgreSQL the XMPP rows are one
    /// statement per chunk, the resume point riding in the first.
    @Test(arguments: StoreBackend.all) func aBurstsRecordsAreOneCommitInOrder(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        #expect(try await store.insertMapping(fromMatrix("$ours", user: alice, origin: "o-ours")))
        let reaction = Reaction(room: room, target: event("$x1"), reactor: romeo, key: "👍", eventID: event("$r1"))
        let before = store.activity.snapshot()
        let delivered = try await store.record(room: room, [
            .fromXMPP(fromXMPP("$x1", stanza: "S1", sender: romeo), reactions: ReactionChange()),
            .reflection(ReflectionReceipt(originID: OriginID("o-ours"), stanzaID: StanzaID("S2"))),
            .fromXMPP(fromXMPP("$x3", stanza: "S3", sender: juliet), reactions: ReactionChange(added: [reaction])),
            .fromXMPP(fromXMPP("$x3", stanza: "S3", sender: juliet), reactions: ReactionChange()),
            .reflection(ReflectionReceipt(originID: OriginID("o-ours"), stanzaID: StanzaID("S2"))),
            .fromXMPP(fromXMPP("$x5", stanza: "S5", sender: romeo), reactions: ReactionChange()),
            .reflection(ReflectionReceipt(originID: nil, stanzaID: StanzaID("S6"))),   // someone else's, already bridged
            .reflection(ReflectionReceipt(originID: nil, stanzaID: nil)),
        ])
        let after = store.activity.snapshot()
        #expect(delivered == [OriginID("o-ours")!])
        #expect(after.commits - before.commits == 1)
        if backend == .postgres { #expect(after.statements - before.statements == 3) }   // the reaction, the receipts, the rows
        #expect(try await store.lastStanzaID(room) == StanzaID("S6"))
        #expect(try await store.mapping(room: room, eventID: event("$ours"))?.stanzaID == StanzaID("S2"))
        for (id, stanza) in [("$x1", "S1"), ("$x3", "S3"), ("$x5", "S5")] {
            let row = try #require(try await store.mapping(room: room, stanzaID: StanzaID(stanza)!))
            #expect(row.eventID == event(id) && row.direction == .xmppToMatrix && row.state == .delivered)
        }
        #expect(try await store.reactions(room: room, target: event("$x1"), reactor: romeo).map(\.key) == ["👍"])
    }

    /// What a portal reads for a burst's messages at once: the stanza-ids this room's map has, of any direction or
    /// state, and no other room's; one statement per chunk (70 ids: 64, 4 and 2).
    @Test(arguments: StoreBackend.all) func mappedStanzaIDsAreReadInChunks(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        _ = try await store.record(room: room, [.fromXMPP(fromXMPP("$a", stanza: "A", sender: romeo), reactions: ReactionChange())])
        var refused = fromXMPP("$b", stanza: "B", sender: romeo)
        refused.state = .failed
        _ = try await store.record(room: room, [.fromXMPP(refused, reactions: ReactionChange())])
        var elsewhere = fromXMPP("$c", stanza: "C", sender: romeo)
        elsewhere.room = other
        _ = try await store.record(room: other, [.fromXMPP(elsewhere, reactions: ReactionChange())])
        let asked = ["A", "B", "C"].map { StanzaID($0)! } + (0..<67).map { StanzaID("n\($0)")! }
        let statements = store.activity.snapshot().statements
        #expect(try await store.mappedStanzaIDs(room, among: asked) == [StanzaID("A")!, StanzaID("B")!])
        #expect(store.activity.snapshot().statements - statements == 3)
    }

    /// Records without XMPP messages still move the resume point (a reflection of someone else's message).
    @Test(arguments: StoreBackend.all) func reflectionsAloneMoveTheResumePoint(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        _ = try await store.record(room: room, [.reflection(ReflectionReceipt(originID: nil, stanzaID: StanzaID("T1"))),
                                                .reflection(ReflectionReceipt(originID: nil, stanzaID: StanzaID("T2")))])
        #expect(try await store.lastStanzaID(room) == StanzaID("T2"))
    }

    // MARK: Payload

    @Test(arguments: StoreBackend.all) func deliveryOrFailureClearsThePayload(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open()
        let store = fixture.store
        #expect(try await store.insertMapping(fromMatrix("$p1", user: alice, origin: "o-p1", payload: "P1")))
        #expect(try await store.insertMapping(fromMatrix("$p2", user: alice, origin: "o-p2", payload: "P2")))
        #expect(try await store.insertMapping(fromMatrix("$p3", user: alice, origin: "o-p3", payload: "P3")))
        #expect(try await store.undeliveredMappings(room).map(\.payload) == ["P1", "P2", "P3"])
        let delivered = try await store.recordReflections(room: room, [
            ReflectionReceipt(originID: OriginID("o-p1"), stanzaID: StanzaID("S-p1")),
            ReflectionReceipt(originID: OriginID("o-p2"), stanzaID: StanzaID("S-p2")),
        ])
        #expect(delivered == [OriginID("o-p1")!, OriginID("o-p2")!])
        try await store.markFailed(room: room, originID: OriginID("o-p3")!)
        for id in ["$p1", "$p2", "$p3"] {
            let row = try #require(try await store.mapping(room: room, eventID: event(id)))
            #expect(row.payload == nil, "payload kept for \(id)")
            #expect(row.body == nil, "body kept for \(id)")
            // What later references need stays.
            #expect(row.xmppID != nil)
            #expect(row.excerpt == "body")
        }
        #expect(try await store.mapping(room: room, eventID: event("$p1"))?.stanzaID == StanzaID("S-p1"))
        #expect(try await store.undeliveredMappings(room).isEmpty)
    }
}
