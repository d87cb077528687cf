import Foundation
import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// A SQLite store with a row in every table `migrate-store` copies, and every read the bridge makes of it, for
/// ``MigrateStoreTests`` and ``MigrateStoreRealServerTests``.
struct StoreCopyFixture {
    let room = RoomID("!room:localhost")!
    let dmRoom = RoomID("!dm:localhost")!
    let alice = UserID("@alice:localhost")!
    let ghost = UserID("@_xmpp_romeo:localhost")!
    let romeo = MessageSender.occupant(.occupantID(OccupantID("occ-romeo")!))
    let inviteRoom = RoomID("!invite:localhost")!
    /// Bytes no text encoding holds, to show blobs move byte for byte.
    let payload: [UInt8] = [0, 1, 0xFF, 0xFE, 0x5C, 0x78, 0x27, 0x00]

    /// A SQLite store (in a file) with rows in every table ``StoreCopy`` copies. Some inbox rows are deleted, so the inbox's
    /// AUTOINCREMENT high-water mark is above its largest remaining `seq`.
    func populatedSQLite() async throws -> (StoreFixture, Store) {
        let fixture = try await StoreBackend.sqlite.open(persistent: true)
        let store = fixture.store
        try await store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: RoomAlias("#room:localhost"), muc: JID("room@muc.localhost")!))
        try await store.updateRoomLinkStatus(room, status: .active, detail: nil)
        try await store.updateRoomLinkArchive(room, archive: true)
        try await store.insertRoomLink(RoomLink(matrixRoom: RoomID("!second:localhost")!, matrixAlias: nil,
                                                muc: JID("second@muc.localhost")!, syncName: true))
        #expect(try await store.recordGhost(ghost, identity: "romeo@example.org", globalName: "Romeo"))
        try await store.saveRoomGhost(RoomGhost(room: room, user: ghost, nick: "romeo", occupantID: OccupantID("occ-romeo"),
                                                realJID: JID("romeo@example.org"), joined: true))
        try await store.savePuppet(Puppet(room: room, user: alice, occupant: JID("room@muc.localhost/Alice")!, nick: "Alice",
                                          displayname: "Alice A.", joined: true))
        // Message map: a delivered XMPP → Matrix row with a reaction, and a Matrix → XMPP row still being sent.
        try await store.recordBridgedFromXMPP(
            MessageMapping(room: room, eventID: EventID("$x1"), stanzaID: StanzaID("S1"), originID: OriginID("o-x1"),
                           direction: .xmppToMatrix, sender: romeo, state: .delivered, xmppID: StanzaAttributeID("x1"),
                           nick: "romeo", excerpt: "hello ünïcode ✓"),
            reactions: ReactionChange(added: [Reaction(room: room, target: EventID("$x1")!, reactor: romeo, key: "👍",
                                                       eventID: EventID("$r1"))]))
        #expect(try await store.insertMapping(MessageMapping(
            room: room, eventID: EventID("$m1"), stanzaID: nil, originID: OriginID("o-m1"), direction: .matrixToXMPP,
            sender: .matrix(alice), state: .sending, body: "pending *body*", kind: .message, xmppID: StanzaAttributeID("o-m1"),
            nick: "Alice", excerpt: "pending", payload: "<body>pending</body>")))
        try await store.setLastStanzaID(room, StanzaID("S1")!)
        _ = try await store.recordFirstActivation(room, at: Date(timeIntervalSince1970: 1_700_000_000.125))
        try await store.setKnownSubject(room, "Subject")
        try await store.setKnownRoomName(room, "Name")
        try await store.setRoomAvatar(room, RoomAvatarRecord(sha1: "aa11", mxc: "mxc://localhost/room"))
        // Inbox: three queued in a processed transaction, then the first handled (deleted).
        let queued = try await store.enqueueInbox([(room, EventID("$q1")!, payload), (room, EventID("$q2")!, payload + [1]),
                                                   (dmRoom, EventID("$q3")!, Array("{\"a\":1}".utf8))],
                                                  markingProcessed: TransactionID("txn-1")!)
        try await store.deleteInbox(seq: queued[0].seq)
        try await store.markTransactionProcessed(TransactionID("txn-2")!)
        try await store.recordInvitation(InvitedRoom(room: inviteRoom, invitedBy: alice, leaveAfter: Date(timeIntervalSince1970: 1_700_000_123.5)))
        try await store.saveDirectChat(DirectChat(linkedRoom: room, identity: "romeo@example.org", matrixUser: alice,
                                                  muc: JID("room@muc.localhost")!, ghost: ghost, matrixRoom: dmRoom))
        try await store.consumeDirectEvent(seq: queued[2].seq, eventID: EventID("$dm-handled")!, room: dmRoom)
        _ = try await store.secret(named: "media")
        try await store.recordXMPPAvatar(sha1: "bb22", mxc: "mxc://localhost/ghost")
        try await store.recordMatrixAvatar(mxc: "mxc://localhost/alice", StoredAvatar(sha1: "cc33", mediaType: "image/png", data: payload))
        try await store.saveXMPPSession(StoredXMPPSession(jid: JID("relay@localhost/isthmus")!, sessionID: "sm-1", location: nil,
                                                          inboundHandled: 7, outboundAcknowledged: 4_294_967_295,
                                                          unacknowledged: ["<message xmlns='jabber:component:accept'/>"]),
                                        account: JID("relay@localhost")!)
        try await store.saveXMPPCredentials(StoredXMPPCredentials(
            userAgentID: "d4ac9e2d-2a6b-4f2e-9c58-1a0e3f5b7c11",
            saltedPassword: .init(hash: "SHA-1", salt: [0, 0xFF, 7], iterations: 4096, bytes: Array(repeating: 0x5A, count: 20)),
            fastToken: .init(mechanism: "HT-SHA-256-NONE", secret: "secret-token:fast-1", expiry: nil, count: 2)),
                                            account: JID("relay@localhost")!)
        try await store.saveMatrixSession(StoredMatrixSession(
            userID: UserID("@relay:localhost")!, deviceID: DeviceID("ISTHMUS0A1B2C3D")!, accessToken: AccessToken("syt_cmVsYXk_a_1")!,
            refreshToken: RefreshToken("syr_cmVsYXk_b_2"), expiresAt: 1_700_000_300_123, authAPI: "legacy"))
        try await store.record(.syncPosition("s72_1234_4_6_1", account: alice))
        // Gateway mode: a dynamic link's idle mark, an XMPP user in a hosted room, an alias spelling, a private room.
        try await store.setRoomLinkIdle(RoomID("!second:localhost")!, since: Date(timeIntervalSince1970: 1_700_000_200))
        let hosted = JID("#lounge%localhost@bridge.localhost")!
        try await store.replaceGatewayOccupants(of: hosted, with: [
            GatewayOccupantRecord(room: hosted, resource: JID("juliet@localhost/balcony")!, nick: "Juliet", ghost: ghost, matrixRoom: inviteRoom),
        ])
        try await store.recordGatewayAliases(["#lounge%localhost": RoomAlias("#Lounge:localhost")!])
        try await store.recordGatewayDirect(ghost: ghost, user: alice, matrixRoom: RoomID("!pm:localhost")!, room: hosted)
        // Encryption: a ghost's device (sealed bytes, opaque to the store), an Olm session, a room key, a used message
        // index, an event held for its key.
        _ = try await store.keepNewGhostDevice(StoredGhostDevice(user: ghost, device: DeviceID("ISTHMUSDEV")!, stage: .crossSigned,
                                                                 account: [1, 2, 0, 255], crossSigning: [3, 4]))
        try await store.keepToDeviceChanges([
            ToDeviceChanges(olmSession: StoredOlmSession(user: ghost, senderKey: "peer", sessionID: "olm1", pickle: [5], lastUsed: 1_700_000_000_000)),
            ToDeviceChanges(roomKey: StoredMegolmSession(room: room, sessionID: "meg1", sender: alice, senderKey: "peer", signingKey: "sig",
                                                         pickle: [6, 0])),
        ])
        _ = try await store.recordMegolmIndex(7, of: "meg1", in: room, by: EventID("$enc1")!)
        try await store.holdEncryptedEvents([HeldEncryptedEvent(eventID: EventID("$held1")!, room: room, sessionID: "meg2",
                                                                event: #"{"type":"m.room.encrypted"}"#, heldAt: 1_700_000_000_500)])
        return (fixture, store)
    }

    /// Every read API the bridge uses, as one comparable value.
    func answers(_ store: Store) async throws -> [String] {
        var answers: [String] = []
        func note(_ value: Any) { answers.append(String(describing: value)) }
        note(try await store.roomLinks())
        note(try await store.xmppSession(account: JID("relay@localhost")!) as Any)
        note(try await store.xmppCredentials(account: JID("relay@localhost")!) as Any)
        note(try await store.matrixSession(of: UserID("@relay:localhost")!).map { [$0.accessToken.secret, $0.refreshToken?.secret, "\($0)"] } as Any)
        note(try await store.syncPosition(account: alice) as Any)
        note(try await store.linkedRooms(among: [room, dmRoom]).map(\.rawValue).sorted())
        note(try await store.linkChangeVersion())
        note(try await store.ghostIdentity(ghost) as Any)
        note(try await store.isKnownGhost(ghost))
        note(try await store.roomGhosts(room))
        note(try await store.puppets(room))
        note(try await store.mapping(room: room, stanzaID: StanzaID("S1")!) as Any)
        note(try await store.mapping(room: room, eventID: EventID("$m1")!) as Any)
        note(try await store.mapping(room: room, originID: OriginID("o-m1")!) as Any)
        note(try await store.mapping(room: room, sender: romeo, xmppID: StanzaAttributeID("x1")!) as Any)
        note(try await store.undeliveredMappings(room))
        note(try await store.reactions(room: room, target: EventID("$x1")!, reactor: romeo))
        note(try await store.reaction(room: room, eventID: EventID("$r1")!) as Any)
        note(try await store.inbox(room))
        note(try await store.inbox(dmRoom))
        note(try await store.seenMatrixEvents(room, among: [EventID("$q1")!, EventID("$q2")!, EventID("$m1")!]).sorted { $0.rawValue < $1.rawValue })
        note(try await store.isTransactionProcessed(TransactionID("txn-1")!))
        note(try await store.isTransactionProcessed(TransactionID("txn-2")!))
        note(try await store.expiredInvitations(at: Date(timeIntervalSince1970: 1_800_000_000)))
        note(try await store.directChat(linkedRoom: room, ghost: ghost, user: alice) as Any)
        note(try await store.directChat(in: dmRoom) as Any)
        note(try await store.directRooms(of: room))
        note(try await store.secret(named: "media"))
        note(try await store.xmppAvatarMXC(sha1: "bb22") as Any)
        note(try await store.matrixAvatar(mxc: "mxc://localhost/alice") as Any)
        note(try await store.roomAvatar(room) as Any)
        note(try await store.roomTexts(room))
        note(try await store.lastStanzaID(room) as Any)
        note(try await store.activeSince(room) as Any)
        note(try await store.gatewayOccupants())
        note(try await store.gatewayAlias(address: "#lounge%localhost") as Any)
        note(try await store.gatewayDirects().map { "\($0)" })
        note(try await store.gatewayDirects(of: ghost).map { "\($0)" })
        note(try await store.ghostDevice(ghost) as Any)
        note(try await store.olmSessions(of: ghost, with: "peer"))
        note(try await store.megolmSession("meg1", in: room, sharedBy: alice) as Any)
        note(try await store.recordMegolmIndex(7, of: "meg1", in: room, by: EventID("$enc1")!))
        note(try await store.heldEncryptedEvents(heldBefore: Int64.max))
        let counts = try await store.counts()
        note(counts.linksByStatus.sorted { $0.key < $1.key })
        note([counts.ghosts, counts.puppets, counts.inbox])
        return answers
    }
}
