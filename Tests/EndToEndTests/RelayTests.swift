import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMLStream
import XMPP

/// Client mode (`xmpp.mode: client`): the bridge as an ordinary XMPP account (`relay@localhost`) on the real server,
/// its one occupant relaying the Matrix users in `relay.xmpp_format`, the XMPP users as ghosts as in component mode.
final class RelayTests: XCTestCase {
    /// The scenario's config turned to client mode: the account instead of the component, over the bed's plain c2s port.
    static func clientMode(_ world: EndToEndHarness, c2sPort: Int? = nil, domain: String? = nil) throws {
        try world.editConfig(clientModeConfig(world.bed, c2sPort: c2sPort, domain: domain))
    }

    /// The config rewrite to client mode, for `RichPair.start(config:)`; `c2sPort` instead of the bed's (a proxy's),
    /// `domain`: the account's host instead of the bed's (the SASL2 host, whose `relay` exists too).
    static func clientModeConfig(_ bed: TestBed, c2sPort: Int? = nil, domain: String? = nil) -> (String) -> String {
        { text in
            let start = text.range(of: "xmpp:\n")!
            let end = text.range(of: "database:", range: start.upperBound..<text.endIndex)!
            return text.replacingCharacters(in: start.lowerBound..<end.lowerBound, with: """
                xmpp:
                  mode: client
                  bot_nick: Matrix
                  client:
                    jid: relay@\(domain ?? bed.xmppDomain)
                    password: "\(bed.password)"
                    server_host: 127.0.0.1
                    server_port: \(c2sPort ?? bed.c2sPort)
                    tls: none

                """)
        }
    }

    /// A linked pair in client mode: the bridge started as `relay@…` (on `domain` when given), alice on Matrix (displayname `name`), Romeo
    /// (XMPP user bob) in the MUC he created.
    static func relayPair(_ scenario: String, database: StoreBackend? = nil, displayname: String = "Alice",
                          c2sPort: Int? = nil, domain: String? = nil) async throws
        -> (world: EndToEndHarness, alice: MatrixTestUser, muc: JID, romeo: XMPPTestClient, room: String) {
        let (world, alice, muc, romeo) = try await started(scenario, database: database, c2sPort: c2sPort, domain: domain)
        try await romeo.joinRoom(muc, nick: "Romeo")
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        try await alice.setDisplayname(displayname, in: room)
        return (world, alice, muc, romeo, room)
    }

    /// The bridge running in client mode, alice on Matrix, Romeo (XMPP user bob) connected; the scenario's MUC, not
    /// made yet.
    static func started(_ scenario: String, database: StoreBackend? = nil, c2sPort: Int? = nil, domain: String? = nil) async throws
        -> (world: EndToEndHarness, alice: MatrixTestUser, muc: JID, romeo: XMPPTestClient) {
        let world = try EndToEndHarness(scenario, database: database)
        try clientMode(world, c2sPort: c2sPort, domain: domain)
        try await world.startBridge()
        return (world, try await world.matrixUser("alice"), world.muc(scenario), try await world.xmppUser("bob"))
    }

    func testTextBothWaysThroughTheRelayOccupantOnceWithoutPuppets() async throws {
        let (world, alice, muc, romeo, room) = try await Self.relayPair("relay", displayname: "Alice Liddell")
        defer { world.stopBridge() }

        // Matrix → XMPP: from the relay occupant `Matrix`, the sender named as the format says, never by Matrix id.
        try await alice.send("hello <b>there</b> & all", to: room)
        try await alice.send("waves", to: room, msgtype: "m.emote")
        let received = try await world.xmppMessages(romeo, from: muc, count: 2, excludingNick: "Romeo")
        XCTAssertEqual(received.map(\.body), ["<Alice Liddell> hello <b>there</b> & all", "* Alice Liddell waves"])
        XCTAssertEqual(Set(received.compactMap { $0.from?.resource }), ["Matrix"], "every Matrix message comes from the relay")
        XCTAssertFalse(received.contains { $0.body?.contains("@alice") == true || $0.body?.contains(":localhost") == true })

        // XMPP → Matrix: Romeo's ghost, named Romeo, as in component mode.
        try romeo.sendGroupchat(to: muc, body: "hi from xmpp")
        let fromXMPP = try await world.matrixMessages(alice, in: room, count: 1, excluding: alice.userID)
        XCTAssertEqual(fromXMPP.map(\.body), ["hi from xmpp"])
        let ghost = try XCTUnwrap(fromXMPP.first?.sender)
        XCTAssertTrue(ghost.hasPrefix("@_xmpp_"), ghost)
        let members = try await alice.members(of: room)
        XCTAssertEqual(members[ghost] ?? nil, "Romeo")

        // The relay's own messages never come back to Matrix, and nothing doubles either way: sentinels sent after
        // everything else arrive after any echo or copy (per-room order holds), so the counts can show them.
        try await alice.send("sentinel from matrix", to: room)
        let late = try await world.xmppMessages(romeo, from: muc, untilBody: "<Alice Liddell> sentinel from matrix", excludingNick: "Romeo")
        XCTAssertEqual(late.map(\.body), ["<Alice Liddell> sentinel from matrix"], "Romeo got a doubled message")
        try romeo.sendGroupchat(to: muc, body: "sentinel from xmpp")
        let all = try await world.matrixMessages(alice, in: room, untilBody: "sentinel from xmpp")
        XCTAssertEqual(all.map(\.body), ["hello <b>there</b> & all", "waves", "hi from xmpp", "sentinel from matrix", "sentinel from xmpp"],
                       "the relay's messages were echoed to Matrix, or something doubled")

        // No puppet joined: besides Romeo, the only occupant Romeo saw come in, in all this, is the relay (presences
        // stay queued while messages are read; a puppet would have joined before alice's first message went out).
        let joined = romeo.queuedStanzas.compactMap { stanza -> String? in
            guard case .presence(let presence) = stanza, presence.type == .available, presence.from?.bare == muc.bare else { return nil }
            return presence.from?.resource
        }
        XCTAssertEqual(Set(joined).subtracting(["Romeo"]), ["Matrix"])
        romeo.close()
    }

    /// kill -9 of `serve` in the middle of a two-way burst, then a restart: every message arrives once, in order, each
    /// way — the relayed ones with their sender's name (the archive and the message map at work, as in component mode).
    func testKillNineMidTwoWayBurstThenRestartDeliversEverythingOnceThroughTheRelay() async throws {
        let (world, alice, muc, romeo, room) = try await Self.relayPair("relay-kill")
        let count = 15
        async let fromMatrix: Void = {
            for index in 0..<count { try await alice.send("m\(index)", to: room) }
        }()
        for index in 0..<count {
            try romeo.sendGroupchat(to: muc, body: "x\(index)")
            if index == count / 3 { world.crashBridge() }
        }
        try await fromMatrix
        try await world.startBridge()
        defer { world.stopBridge() }
        try await Self.assertEachOnceInOrder(world, alice, room, romeo, muc, count: count)
        romeo.close()
    }

    /// `check-config` and `doctor` in client mode: what the mode needs, checked against the real server.
    func testCheckConfigAndDoctorSayWhatClientModeNeeds() async throws {
        let world = try EndToEndHarness("relay-doctor")
        try Self.clientMode(world)
        let checked = try world.cli("check-config")
        XCTAssertEqual(checked.status, 0, checked.stderr)
        XCTAssertTrue(checked.stdout.contains("XMPP: client mode, as relay@\(world.bed.xmppDomain)"), checked.stdout)
        let doctor = try world.cli("doctor")
        XCTAssertEqual(doctor.status, 0, doctor.stdout + doctor.stderr)
        XCTAssertTrue(doctor.stdout.contains("ok   XMPP login: logged in as relay@\(world.bed.xmppDomain)/isthmus"), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("warn XMPP TLS: none"), doctor.stdout)
        // A wrong password is named as such.
        try world.editConfig { $0.replacingOccurrences(of: "password: \"\(world.bed.password)\"", with: "password: \"wrong\"") }
        let refused = try world.cli("doctor")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.stdout.contains("FAIL XMPP login: as relay@\(world.bed.xmppDomain)"), refused.stdout)
        // Plaintext to a host that is not loopback is refused before anything connects.
        try world.editConfig { $0.replacingOccurrences(of: "server_host: 127.0.0.1", with: "server_host: xmpp.example.org") }
        let plaintext = try world.cli("check-config")
        XCTAssertEqual(plaintext.status, 1)
        XCTAssertTrue(plaintext.stderr.contains("xmpp.client.tls") && plaintext.stderr.contains("loopback"), plaintext.stderr)
    }

    /// `serve` against a server whose certificate it must not accept — one no trust anchor vouches for, and one for
    /// another name (trusted through `ca_file`) — never sends a credential, and its attempts back off (0.5–1 s, then
    /// doubling): no retry storm. The account's server is a Python c2s endpoint here, with a certificate of its own.
    func testAnUntrustedOrMisnamedCertificateIsRefusedWithoutARetryStorm() async throws {
        for (names, trusted) in [("DNS:localhost", false), ("DNS:example.org", true)] {
            let directory = try TemporaryDirectory()
            _ = try TestCertificate(names: names, in: directory)
            let server = try ScriptedPythonServer(script: PythonServerScripts.xmppClientServer, arguments: ["starttls", "relay", "secret"],
                                                  in: directory)
            let world = try EndToEndHarness("relay-tls")
            try world.editConfig(Self.clientModeConfig(world.bed, c2sPort: server.port))
            try world.editConfig { text in
                var text = text.replacingOccurrences(of: "    tls: none\n", with: "    tls: starttls\n")
                if trusted { text = text.replacingOccurrences(of: "    tls: starttls\n", with: "    tls: starttls\n    ca_file: \(directory.path("cert.pem"))\n") }
                return text
            }
            let process = try BridgeProcess(config: world.config, logFile: world.directory.appendingPathComponent("serve-tls.log"))
            defer { _ = process.stop() }
            let started = ContinuousClock.now
            var times: [ContinuousClock.Instant] = []
            try await eventually("four attempts (\(names)); log: \(process.logFile.path)", timeout: 40) {
                guard process.isRunning else { throw EndToEndHarness.BridgeExited(log: process.log) }
                let attempts = server.events("ended").count   // each attempt ends in the handshake the bridge refused
                while times.count < attempts { times.append(ContinuousClock.now) }
                return attempts >= 4
            }
            XCTAssertEqual(server.events("auth"), [], "no credential went to a server the bridge does not trust (\(names))")
            XCTAssertGreaterThanOrEqual(times[3] - started, .seconds(3), "backed off (0.5 + 1 + 2 s at least), not a storm")
            XCTAssertTrue(process.log.contains("certificate"), "the log says why: \(process.log.suffix(2000))")
        }
    }

    /// What the relay may do as the author of its messages: a Matrix edit corrects the relay's message (XEP-0308), a
    /// reply names Romeo's message (XEP-0461) with a quote naming him, a redaction retracts the relay's message
    /// (XEP-0424) — every body naming alice by name, never by Matrix id.
    func testEditsRepliesAndRedactionsGoAsTheRelaysOwn() async throws {
        let pair = try await RichPair.start("relay-rich", config: Self.clientModeConfig(try TestBed.fromEnvironment()))
        defer { pair.close() }
        let name = RichPair.puppetNick
        func fromRelay(_ what: String, _ matches: @escaping @Sendable (Message) -> Bool) async throws -> Message {
            try await pair.romeo.nextMessage(from: pair.muc, nick: "Matrix", within: 30, what, where: matches)
        }
        let eventID = try await pair.alice.send("tpyo", to: pair.room)
        let original = try await fromRelay("the original") { $0.body == "<\(name)> tpyo" }
        let originalID = try XCTUnwrap(original.id?.rawValue)
        try await pair.alice.edit(eventID, to: "typo", in: pair.room)
        let correction = try await fromRelay("the correction") { $0.extensionElement("replace", namespace: RichWire.correction) != nil }
        XCTAssertEqual(correction.extensionElement("replace", namespace: RichWire.correction)?[attribute: "id"], originalID)
        XCTAssertEqual(correction.body, "<\(name)> typo")

        let fromRomeo = try await pair.xmppSays("a question from romeo")
        try await pair.alice.reply("an answer", to: fromRomeo.event.eventID, in: pair.room)
        let reply = try await fromRelay("the reply") { $0.body?.contains("an answer") == true }
        XCTAssertEqual(reply.extensionElement("reply", namespace: RichWire.reply)?[attribute: "id"], try pair.stanzaID(of: fromRomeo.reflected))
        XCTAssertTrue(reply.body?.contains("Romeo") == true, "the quote names Romeo: \(reply.body ?? "")")
        XCTAssertTrue(reply.body?.hasSuffix("<\(name)> an answer") == true, reply.body ?? "")

        try await pair.alice.redact(eventID, in: pair.room)
        let retraction = try await fromRelay("the retraction") {
            $0.extensionElement("retract", namespace: RichWire.retract1) != nil || $0.extensionElement("apply-to", namespace: RichWire.fasten) != nil
        }
        XCTAssertEqual(retraction.extensionElement("apply-to", namespace: RichWire.fasten)?[attribute: "id"], original.originID?.rawValue)
        for message in [original, correction, reply, retraction] {
            XCTAssertEqual(RichWire.matrixIdentifiers(in: message.body ?? ""), [], "a Matrix id in \(message.body.debugDescription)")
        }
    }

    /// Reactions from Matrix go as the relay occupant's XEP-0444 set for the message: the union of every Matrix user's
    /// keys, updated as they change — one 👍 for two users, kept until both took it back.
    func testReactionsGoAsTheRelaysSetOfEveryMatrixUsersKeys() async throws {
        let pair = try await RichPair.start("relay-react", config: Self.clientModeConfig(try TestBed.fromEnvironment()))
        defer { pair.close() }
        let bob = try await pair.world.matrixUser("bob")
        try await pair.alice.invite(bob.userID, to: pair.room)
        try await bob.join(pair.room)
        let target = try await pair.xmppSays("react to me")
        let stanzaID = try pair.stanzaID(of: target.reflected)
        func relaySet(_ what: String, _ keys: [String]) async throws {
            let message = try await pair.romeo.nextMessage(from: pair.muc, nick: "Matrix", within: 30, what) {
                RichWire.reactions(in: $0) != nil
            }
            let reactions = RichWire.reactions(in: message)
            XCTAssertEqual(reactions?.id, stanzaID, "reactions/@id is the stanza-id of Romeo's message")
            XCTAssertEqual(reactions?.keys, keys, what)
        }
        let thumbs = try await pair.alice.react("👍", to: target.event.eventID, in: pair.room)
        try await relaySet("alice's 👍", ["👍"])
        let heart = try await pair.alice.react("❤️", to: target.event.eventID, in: pair.room)
        try await relaySet("alice's ❤️ beside it", ["👍", "❤️"])
        _ = try await bob.react("👍", to: target.event.eventID, in: pair.room)
        try await relaySet("bob's 👍: still one", ["👍", "❤️"])
        _ = try await pair.alice.redact(thumbs, in: pair.room)
        try await relaySet("alice's 👍 taken back: bob's stays", ["❤️", "👍"])
        _ = try await pair.alice.redact(heart, in: pair.room)
        try await relaySet("alice's ❤️ taken back", ["👍"])
        // Nothing came back to Matrix as an XMPP user's reaction: the relay's sets are its own.
        let timeline = try await pair.timeline(untilXMPPSentinel: "reactions sentinel")
        let humans: Set<String> = [pair.alice.userID, bob.userID]
        XCTAssertEqual(timeline.filter { $0.type == "m.reaction" && !humans.contains($0.sender) }.count, 0)
        XCTAssertEqual(timeline.filter { $0.type == "m.reaction" }.count, 3, "alice's two and bob's one")
    }

    /// A members-only MUC refuses the account, and the link stays in error; an invitation of the account then makes
    /// the bridge join again at once — a XEP-0249 direct one (from Romeo, who has not made it a member yet: refused
    /// again) and a mediated one from the room's owner (the room makes it a member): the link is active, text flows.
    /// A presence subscription request then gets the default answer: declined.
    func testAMembersOnlyRoomIsJoinedOnceItsOwnerInvitesTheAccount() async throws {
        let (world, alice, muc, romeo) = try await Self.started("relay-invite")
        defer { world.stopBridge() }
        defer { romeo.close() }
        try await romeo.createRoom(muc, nick: "Romeo", fields: ["muc#roomconfig_membersonly": ["1"], "muc#roomconfig_persistentroom": ["1"]])
        let alias = "room-\(world.suffix)-invite"
        let room = try await alice.createRoom(aliasLocalpart: alias, invite: [world.botUserID])
        XCTAssertEqual(try world.cli("link", "#\(alias):localhost", muc.description).status, 0)
        try await world.waitForLink(room, status: "error")
        let account = try XCTUnwrap(JID("relay@\(world.bed.xmppDomain)"))
        func rejoins() -> Int { world.bridge?.log.components(separatedBy: "Invited into the MUC; joining again").count ?? 1 }

        // XEP-0249, straight to the account: the bridge tries again, and the room (no membership yet) refuses again.
        try romeo.send(.message(Message(to: account, extensions: [DirectInvite(room: muc, reason: "come in").element])))
        try await eventually("the bridge tried again after the direct invitation", timeout: 20) { rejoins() == 2 }
        try await world.waitForLink(room, status: "error")

        // Mediated by the room (XEP-0045 §7.8.2): its owner's invitation makes the account a member.
        try romeo.send(.message(Message(to: muc.bare, mucUser: MUCInvite(to: account, reason: "welcome").mucUser)))
        try await world.waitForLink(room, status: "active", timeout: 30)
        try await alice.setDisplayname("Alice", in: room)
        try await alice.send("in at last", to: room)
        let received = try await world.xmppMessages(romeo, from: muc, untilBody: "<Alice> in at last", excludingNick: "Romeo")
        XCTAssertEqual(received.map(\.body), ["<Alice> in at last"])

        // The account is available (its initial presence is what lets invitations reach it), and declines a presence
        // subscription by default (xmpp.client.accept_subscriptions: none) rather than leaving it pending.
        // Romeo asks for his roster and goes online first: servers tell only such sessions of the answer (Prosody the
        // interested ones, ejabberd the available ones).
        _ = try await romeo.request(IQ(type: .get, payload: .other(XElement("query", namespace: XMPPNamespace.roster))))
        try romeo.send(.presence(Presence()))
        try romeo.send(.presence(Presence(type: .subscribe, to: account)))
        let answer = try await romeo.nextPresence(within: 20, "the account's answer") {
            $0.from?.bare == account && ($0.type == .subscribed || $0.type == .unsubscribed)
        }
        XCTAssertEqual(answer.type, .unsubscribed)
    }

    /// Self-service linking works through the account as through the component: `!isthmus link` makes the account's
    /// occupant ask the MUC's owner in private, the owner's `yes` links, text crosses through the relay, `unlink` ends it.
    func testSelfServiceLinkingThroughTheAccount() async throws {
        let (world, alice, muc, romeo) = try await Self.started("relay-self")
        defer { world.stopBridge() }
        defer { romeo.close() }
        try await romeo.joinRoom(muc, nick: "Romeo")   // creates the room: Romeo is its owner
        let room = try await alice.createRoom(name: "Lounge \(world.suffix)", invite: [world.botUserID])
        try await world.waitForBot(alice, in: room)

        try await alice.send("!isthmus link \(muc) Romeo", to: room)
        let question = try await world.privateMessage(to: romeo, from: muc)
        XCTAssertTrue(question.body?.contains("Reply yes within 5 minutes") == true, question.body ?? "")
        XCTAssertEqual(question.from, muc.with(resource: "Matrix"), "asked by the account's occupant")
        try romeo.send(.message(Message(type: .chat, to: muc.with(resource: "Matrix")!, body: "yes")))
        _ = try await world.botNotice(alice, in: room, containing: "Linked with \(muc), allowed by Romeo.")
        try await world.waitForLink(room, status: "active")

        try await alice.setDisplayname("Alice", in: room)
        try await alice.send("hello through the relay", to: room)
        let seen = try await world.xmppMessages(romeo, from: muc, untilBody: "<Alice> hello through the relay", excludingNick: "Romeo")
        XCTAssertEqual(seen.last?.body, "<Alice> hello through the relay")
        try romeo.sendGroupchat(to: muc, body: "hello from xmpp")
        let bridged = try await world.matrixMessages(alice, in: room, untilBody: "hello from xmpp", excluding: alice.userID)
        XCTAssertEqual(bridged.filter { $0.sender != world.botUserID }.map(\.body), ["hello from xmpp"])

        try await alice.send("!isthmus unlink", to: room)
        try await eventually("link gone", timeout: 20) { try world.links().isEmpty }
    }

    /// Sentinels sent last each way (any doubled or late copy comes before them), then what crossed: `x0…` from Romeo
    /// into Matrix and Alice's `m0…` into the MUC, each once and in order.
    static func assertEachOnceInOrder(_ world: EndToEndHarness, _ alice: MatrixTestUser, _ room: String, _ romeo: XMPPTestClient,
                                      _ muc: JID, count: Int, file: StaticString = #filePath, line: UInt = #line) async throws {
        try await alice.send("m-end", to: room)
        try romeo.sendGroupchat(to: muc, body: "x-end")
        let inMatrix = try await world.matrixMessages(alice, in: room, untilBody: "x-end", excluding: alice.userID, timeout: 60)
        XCTAssertEqual(inMatrix.map(\.body), (0..<count).map { "x\($0)" } + ["x-end"], file: file, line: line)
        let inXMPP = try await world.xmppMessages(romeo, from: muc, untilBody: "<Alice> m-end", excludingNick: "Romeo", timeout: 60)
        XCTAssertEqual(inXMPP.map(\.body), (0..<count).map { "<Alice> m\($0)" } + ["<Alice> m-end"], file: file, line: line)
    }

    /// The unavailable presences of the relay occupant Romeo received (and has not read): none while its session lives.
    static func relayLeft(_ romeo: XMPPTestClient, _ muc: JID) -> [Presence] {
        romeo.queuedStanzas.compactMap { stanza -> Presence? in
            guard case .presence(let presence) = stanza, presence.type == .unavailable, presence.from == muc.bare.with(resource: "Matrix") else {
                return nil
            }
            return presence
        }
    }

    /// kill -9 with traffic both ways, restarted at once: the XEP-0198 session kept in the store is resumed, so the
    /// relay occupant never leaves the room (Romeo sees no unavailable presence of it), and every message arrives once.
    func testAKillNineThenARestartResumesTheSessionSoTheRelayNeverLeaves() async throws {
        let world = try await Self.killNineThenRestartResumes("relay-resume")
        world.stopBridge()
    }

    /// The body of the kill -9 resumption test, for the account on `domain` (the bed's by default); returns the world
    /// with the restarted bridge running, for more checks.
    static func killNineThenRestartResumes(_ scenario: String, domain: String? = nil) async throws -> EndToEndHarness {
        let (world, alice, muc, romeo, room) = try await relayPair(scenario, domain: domain)
        try await alice.send("before", to: room)
        _ = try await world.xmppMessages(romeo, from: muc, untilBody: "<Alice> before", excludingNick: "Romeo")
        let count = 9
        for index in 0..<count {
            try await alice.send("m\(index)", to: room)
            try romeo.sendGroupchat(to: muc, body: "x\(index)")
            if index == count / 3 { world.crashBridge() }
        }
        try await world.startBridge()
        try await eventually("the kept session resumed (log: \(world.bridge?.logFile.path ?? "-"))", timeout: 20) {
            world.bridge?.log.contains("Resumed the XMPP session") == true
        }
        XCTAssertFalse(world.bridge?.log.contains("no longer holds the session") == true)
        try await Self.assertEachOnceInOrder(world, alice, room, romeo, muc, count: count)
        XCTAssertEqual(relayLeft(romeo, muc), [], "the relay occupant left the room and came back")
        let scrape = try await MetricsScrape.fetch(port: world.bed.metricsPort)
        XCTAssertEqual(scrape["isthmus_xmpp_session_resumptions_total{outcome=\"resumed\"}"], 1, scrape.text)
        XCTAssertEqual(scrape["isthmus_xmpp_session_resumptions_total{outcome=\"failed\"}"], 0)
        XCTAssertEqual(scrape["isthmus_puppets"], 0, "no puppets in client mode")
        romeo.close()
        return world
    }

    /// The account's connection cut by a TCP proxy for a few seconds under two-way traffic, reconnections refused
    /// meanwhile: the same process resumes the session once the network is back, so the relay occupant never leaves
    /// the room, what the server had not acknowledged is sent again, and every message arrives once, in order.
    func testAConnectionCutForAFewSecondsIsResumedAndLosesNothing() async throws {
        let proxy = try TCPCutProxy(forwardingTo: try TestBed.fromEnvironment().c2sPort)
        defer { proxy.close() }
        let (world, alice, muc, romeo, room) = try await Self.relayPair("relay-cut", c2sPort: proxy.port)
        defer { world.stopBridge() }
        try await alice.send("before", to: room)
        _ = try await world.xmppMessages(romeo, from: muc, untilBody: "<Alice> before", excludingNick: "Romeo")
        let count = 9
        var attempts = 0
        for index in 0..<count {
            try await alice.send("m\(index)", to: room)
            try romeo.sendGroupchat(to: muc, body: "x\(index)")
            if index == count / 3 {
                proxy.cut()
                attempts = proxy.accepted
            }
        }
        try await eventually("the bridge saw the link drop and tried again while it was cut", timeout: 20) {
            world.bridge?.log.contains("XMPP link down") == true && proxy.accepted > attempts
        }
        let port = world.bed.metricsPort
        let down = try await RawHTTP.request("GET", port: port, "/ready")
        XCTAssertEqual(down.status, 503, down.text)
        XCTAssertTrue(down.text.contains("the XMPP account relay@\(world.bed.xmppDomain) is not connected"), down.text)
        proxy.restore()
        try await eventually("the session resumed (log: \(world.bridge?.logFile.path ?? "-"))", timeout: 30) {
            world.bridge?.log.contains("Resumed the XMPP session") == true
        }
        try await eventually("/ready again", timeout: 20) { try await RawHTTP.request("GET", port: port, "/ready").status == 200 }
        try await Self.assertEachOnceInOrder(world, alice, room, romeo, muc, count: count)
        XCTAssertEqual(Self.relayLeft(romeo, muc), [], "the relay occupant left the room and came back")
        XCTAssertFalse(world.bridge?.log.contains("no longer holds the session") == true)
        let scrape = try await MetricsScrape.fetch(port: world.bed.metricsPort)
        XCTAssertEqual(scrape["isthmus_xmpp_session_resumptions_total{outcome=\"resumed\"}"], 1, scrape.text)
        XCTAssertEqual(scrape["isthmus_xmpp_session_resumptions_total{outcome=\"failed\"}"], 0)
        romeo.close()
    }

    /// A restart after the server gave the session up (here: the kept id no longer names one, as after the resumption
    /// window): the server says item-not-found, the bridge binds anew, rejoins and catches up from the archive — every
    /// message once.
    func testARestartAfterTheSessionIsGoneRejoinsAndCatchesUpOnce() async throws {
        let (world, alice, muc, romeo, room) = try await Self.relayPair("relay-expired", database: .sqlite)   // the kept session is aged with sqlite3
        try await alice.send("before", to: room)
        _ = try await world.xmppMessages(romeo, from: muc, untilBody: "<Alice> before", excludingNick: "Romeo")
        world.crashBridge()
        let database = world.directory.appendingPathComponent("isthmus.sqlite").path
        let aged = try BridgeProcess.run([database, """
            PRAGMA busy_timeout = 5000;
            UPDATE xmpp_sessions SET session_id = 'gone-' || session_id;
            SELECT count(*) FROM xmpp_sessions;
            """], executable: URL(fileURLWithPath: "/usr/bin/sqlite3"))
        XCTAssertEqual(aged.status, 0, aged.stderr)
        XCTAssertEqual(aged.stdout.split(separator: "\n").last, "1", "the session was kept")
        for index in 0..<5 {
            try await alice.send("m\(index)", to: room)
            try romeo.sendGroupchat(to: muc, body: "x\(index)")
        }
        try await world.startBridge()
        defer { world.stopBridge() }
        try await eventually("the server refused the kept session", timeout: 20) {
            world.bridge?.log.contains("no longer holds the session") == true
        }
        try await Self.assertEachOnceInOrder(world, alice, room, romeo, muc, count: 5)
        let scrape = try await MetricsScrape.fetch(port: world.bed.metricsPort)
        XCTAssertEqual(scrape["isthmus_xmpp_session_resumptions_total{outcome=\"failed\"}"], 1, scrape.text)
        XCTAssertEqual(scrape["isthmus_xmpp_session_resumptions_total{outcome=\"resumed\"}"], 0)
        XCTAssertGreaterThanOrEqual(scrape["isthmus_catchup_messages_total{side=\"xmpp\"}"], 5, "the archive caught up what came meanwhile")
        // One read at the rejoin; on ejabberd a second, as the old session's occupant (the same full JID) is removed
        // once the new session binds its resource, and the bridge joins again.
        XCTAssertGreaterThanOrEqual(scrape["isthmus_xmpp_archive_catchups_total"], 1, "an archive read at the rejoin")
        romeo.close()
    }
}
