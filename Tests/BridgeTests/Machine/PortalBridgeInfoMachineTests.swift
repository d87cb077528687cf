@testable import Bridge
import Foundation
import IsthmusCommon
import Testing

/// The room's `m.bridge` state (MSC2346) as literal sequences: set once when the link becomes active, withdrawn on unlink.
@Suite struct PortalBridgeInfoMachineTests {
    @Test func theStateIsSetWhenTheLinkBecomesActiveAndNotAgainAfterAReconnect() {
        var f = MachineFixture()
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        _ = f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: false)))
        _ = f.act(.roomLoaded(f.snapshot(first: true)))
        #expect(f.act(.puppets(.membersFetched([:])))
                == [.loadUndelivered])
        #expect(f.act(.undeliveredLoaded([]))
                == [.ghosts(.queueReconciliation), .roomState(.setBridgeInfo(f.bridgeInfo)), .setStatus(.active, detail: nil), .catchUp(.readTimeline)])
        _ = f.act(.catchUp(.inboxRead([])))
        _ = f.act(.xmppDisconnected)
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        _ = f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: false)))
        _ = f.act(.roomLoaded(f.snapshot()))
        _ = f.act(.puppets(.membersFetched([:])))
        #expect(f.act(.undeliveredLoaded([])) == [.ghosts(.queueReconciliation), .setStatus(.active, detail: nil), .catchUp(.readTimeline)])
    }

    @Test func aFailedActivationSetsNothing() {
        var f = MachineFixture()
        _ = f.act(.activate)
        #expect(f.act(.botJoinedMatrix(error: .refused("M_FORBIDDEN"))).contains { if case .roomState(.setBridgeInfo) = $0 { true } else { false } } == false)
        #expect(f.machine.roomState.bridgeInfoSet == false)
    }

    @Test func unlinkWithdrawsTheStateBeforeAnyoneLeaves() {
        var f = MachineFixture()
        f.activate()
        let actions = f.act(.unlink(xmppConnected: true))
        #expect(actions.first == .roomState(.setBridgeInfo(f.bridgeInfoWithdrawn)))
        #expect(actions.count == 2)
    }

    @Test func theContentHasMSC2346sShape() throws {
        let f = MachineFixture()
        let content = try #require(f.bridgeInfo.content)
        let json = String(decoding: try JSONEncoder.sorted.encode(content), as: UTF8.self)
        #expect(json == #"{"bridgebot":"@isthmus:localhost","channel":{"displayname":"lounge","id":"lounge@conference.localhost"},"#
                + #""network":{"displayname":"conference.localhost","id":"conference.localhost"},"protocol":{"displayname":"XMPP","id":"xmpp"}}"#)
        #expect(f.machine.roomState.bridgeInfo == content)
    }
}

extension JSONEncoder {
    /// Keys sorted, slashes unescaped: JSON comparable as text.
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
