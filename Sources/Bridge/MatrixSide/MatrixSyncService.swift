import IsthmusCommon
import IsthmusStore
import Matrix

/// Where the bridge's Matrix account syncs from (production: `MatrixClient.sync` with the bridge's filter).
public protocol MatrixSyncSource: Sendable {
    /// One `/sync` after `since` (nil: the first), waiting up to `wait` for something to happen.
    func sync(since: String?, wait: Duration) async throws -> SyncResponse
    /// The rooms the account is in (`GET /joined_rooms`); nil when the source cannot tell.
    func joinedRooms() async throws -> [RoomID]?
}

extension MatrixSyncSource {
    public func joinedRooms() async throws -> [RoomID]? { nil }
}

/// Matrix client mode's intake (issue 28): the account's `/sync`, batch after batch, into the bridge as an
/// application service's transactions go in — each batch's events queued in the commit that moves the stored sync
/// position past it (``IntakeMark/syncPosition(_:account:)``), so a crash replays at most the batch the inbox already
/// holds, and nothing is skipped. A `limited` timeline sends its room to fill the gap from the timeline; an invitation
/// into a linked room is accepted and the room's link activated again; other invitations go to the self-service desk.
/// The first sync of an account starts from now: what happened before is not bridged. A failed sync or intake is tried
/// again after a pause (the position stays), logged once per failure spell. Does I/O; runs as one of the bridge's
/// services.
struct MatrixSyncService: BridgeService {
    let source: any MatrixSyncSource
    let bridge: Bridge
    let account: UserID
    /// How long one sync waits for news.
    var wait: Duration = .seconds(30)
    /// The pause after a failure (doubling up to ``maximumPause``).
    var pause: Duration = .seconds(1)
    var maximumPause: Duration = .seconds(30)

    func run() async {
        let context = bridge.context
        var position: String?
        var failures = 0
        var synced = false
        while !Task.isCancelled {
            do {
                if failures == 0 || position == nil { position = try await context.store.syncPosition(account: account) }
                // The first sync of a run answers at once (what came meanwhile, or nothing); later ones long-poll.
                let response = try await source.sync(since: position, wait: synced ? wait : .zero)
                context.metrics.health.homeserverAnswered()
                try await take(response, history: position != nil)
                if !synced {
                    synced = true
                    context.logger.info("Syncing as the bridge's Matrix account", metadata: [
                        "matrix.user.id": account.rawValue, "matrix.sync.resumed": "\(position != nil)"])
                    await reportLinkedRoomsWithoutTheAccount()
                }
                position = response.nextBatch
                if failures > 0 { context.logger.info("Matrix sync going again", metadata: ["matrix.sync.failures": "\(failures)"]) }
                failures = 0
            } catch {
                if Task.isCancelled { return }
                if failures == 0 { context.logger.warning("Matrix sync failed; trying again", metadata: ["error": "\(error)"]) }
                failures += 1
                let delay = min(maximumPause, pause * Double(1 << min(failures - 1, 16)))
                try? await context.clock.sleep(until: context.clock.now() + delay)
            }
        }
    }

    /// One batch into the bridge: its events with the new position (durable before anything is acted on), then its
    /// gaps, invitations and removals, and the self-service desk's commands.
    func take(_ response: SyncResponse, history: Bool) async throws {
        let context = bridge.context
        let intake = MatrixSyncIntake(response, isOurs: { $0 == account || context.matrix.isGhost($0) }, history: history)
        if response.undecodable > 0 {
            context.logger.notice("Matrix events that do not decode were left out of a sync", metadata: ["matrix.sync.undecodable": "\(response.undecodable)"])
        }
        try await bridge.acceptMatrixEvents(intake.events, mark: .syncPosition(response.nextBatch, account: account), limited: Set(intake.gaps))
        if !intake.gaps.isEmpty { context.metrics.syncGap(rooms: intake.gaps.count) }
        for invite in intake.invites { await invited(invite) }
        for removal in intake.removals {
            context.logger.warning("The bridge's Matrix account left a room or was removed from it",
                                   metadata: ["matrix.room.id": removal.room.rawValue,
                                              "matrix.user.id": removal.membership?.sender.rawValue ?? "-"])
        }
        bridge.selfService?.accept(intake.raw)
    }

    /// Once per run, after the first batch (whose invitations into linked rooms were accepted): each linked room the
    /// account is not in, named in the log — nothing crosses there until someone invites it (it cannot join alone).
    private func reportLinkedRoomsWithoutTheAccount() async {
        let context = bridge.context
        guard let joined = try? await source.joinedRooms().map(Set.init),
              let links = try? await context.store.roomLinks() else { return }
        for link in links where !link.unlinking && !joined.contains(link.matrixRoom) {
            context.logger.warning("The bridge's Matrix account is not in a linked room: nothing crosses there until someone invites it",
                                   metadata: ["matrix.room.id": link.matrixRoom.rawValue, "xmpp.muc": link.muc.description,
                                              "matrix.user.id": account.rawValue])
        }
    }

    /// The account was invited: into a linked room it joins (it cannot join otherwise) and the link activates again;
    /// any other invitation is the self-service desk's, as an application service's bot invitation is.
    private func invited(_ invite: SyncResponse.InvitedRoom) async {
        let context = bridge.context
        do {
            if try await !context.store.linkedRooms(among: [invite.room]).isEmpty {
                try await context.matrix.join(invite.room, as: account)
                context.logger.info("Joined a linked room the bridge's Matrix account was invited to",
                                    metadata: ["matrix.room.id": invite.room.rawValue])
                bridge.directory.portal(for: invite.room)?.enqueue(.activate)
                return
            }
            if let inviter = invite.inviter { bridge.selfService?.invited(invite.room, by: inviter) }
        } catch {
            context.logger.warning("Could not accept an invitation", metadata: ["matrix.room.id": invite.room.rawValue, "error": "\(error)"])
        }
    }
}
