@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixAppService
import MatrixClient
import Testing

/// What the self-service desk takes from a homeserver transaction: the bot's invitations and `!isthmus` commands
/// from people, once each; nothing from the bridge's own users, no edits, no other invitations.
@Suite struct SelfServiceDeskTests {
    func desk() throws -> SelfServiceDesk {
        let store = try Store(path: ":memory:", logger: .disabled)
        // Never called here: accept() reads nothing from the homeserver.
        let client = MatrixClient(configuration: .init(homeserverURL: URL(string: "http://127.0.0.1:9")!, accessToken: "t"),
                                  logger: .disabled)
        let settings = SelfServiceSettings(enabled: true, consentTimeout: .seconds(300), inviteTimeout: .seconds(86_400),
                                           links: LinkService(store: store, client: client, bot: UserID("@isthmus:localhost")!),
                                           client: client)
        let bridge = Bridge(store: store, xmpp: FakeXMPPLink(), matrix: FakeMatrixLink(),
                            naming: BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!, logger: .disabled,
                            selfService: settings)
        return try #require(bridge.selfService)
    }

    func events(_ json: String) throws -> [ClientEvent] {
        try TransactionDecoder.decode(Data(#"{"events": [\#(json)]}"#.utf8), id: #require(TransactionID("t"))).get().events
    }

    func message(_ id: String, from sender: String, _ body: String, extra: String = "") -> String {
        #"{"type": "m.room.message", "event_id": "$\#(id)", "room_id": "!r:localhost", "sender": "\#(sender)", "origin_server_ts": 1, "content": {"msgtype": "m.text", "body": "\#(body)"\#(extra)}}"#
    }

    func invite(_ id: String, of user: String) -> String {
        #"{"type": "m.room.member", "event_id": "$\#(id)", "room_id": "!r:localhost", "sender": "@alice:localhost", "state_key": "\#(user)", "origin_server_ts": 1, "content": {"membership": "invite"}}"#
    }

    @Test func takesInvitationsOfTheBotAndCommandsFromPeopleOnce() async throws {
        let desk = try desk()
        let batch = try events([
            invite("i1", of: "@isthmus:localhost"),
            invite("i2", of: "@bob:localhost"),
            message("m1", from: "@alice:localhost", "!isthmus status"),
            message("m2", from: "@alice:localhost", "hello"),
            message("m3", from: "@isthmus:localhost", "!isthmus help"),
            message("m4", from: "@_xmpp_romeo:localhost", "!isthmus unlink"),
            message("m5", from: "@alice:localhost", "!isthmus unlink", extra: #", "m.relates_to": {"rel_type": "m.replace", "event_id": "$m1"}"#),
        ].joined(separator: ","))
        desk.accept(batch)
        desk.accept(batch)   // the homeserver delivered it again
        desk.accept(try events(message("m6", from: "@bob:localhost", "!isthmus link lounge@conference.localhost Juliet")))
        desk.finish()
        var taken: [String] = []
        for await input in desk.inputs {
            switch input {
            case .invited(let room, let sender): taken.append("invited \(room) by \(sender)")
            case .command(let command, _, let sender, let eventID): taken.append("\(eventID) \(sender) \(command)")
            case .checkInvitations: break
            }
        }
        #expect(taken == [
            "invited !r:localhost by @alice:localhost",
            "$m1 @alice:localhost status",
            #"$m6 @bob:localhost link(muc: lounge@conference.localhost, ownerNick: "Juliet")"#,
        ])
    }
}
