import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import MatrixClient

/// The `!isthmus` commands: `help`, `status`, `unlink`, and `link` with its consent handshake. Replies are `m.notice`s
/// from the bot; `link` and `unlink` need the power to change the room's settings (see ``RoomAuthority``).
extension SelfServiceDesk {
    /// Handles one command from `sender` in `room`. Does I/O; runs on a child task of ``run()``.
    func handle(_ command: BridgeCommand, room: RoomID, sender: UserID, eventID: EventID) async {
        // One transaction id per command and text: a retried call posts once, two different replies both post.
        let reply = { @Sendable (text: String) async in
            await self.notice(text, in: room, subject: "command:\(eventID.rawValue):\(text)")
        }
        logger.debug("Command received", metadata: ["matrix.room.id": room.rawValue, "matrix.user.id": sender.rawValue,
                                                   "matrix.event.id": eventID.rawValue])
        switch command {
        case .help:
            await reply(BridgeCommand.helpText)
        case .usage(let text):
            await reply(text)
        case .status:
            await reply(await status(of: room))
        case .unlink:
            await unlink(room, by: sender, reply: reply)
        case .link(let muc, let ownerNick):
            await link(room, muc: muc.bare, ownerNick: ownerNick, by: sender, eventID: eventID, reply: reply)
        }
    }

    /// Why `sender` may not manage `room`'s bridge (or the room's facts could not be read); nil: they may.
    func authorize(_ sender: UserID, in room: RoomID) async -> (authority: RoomAuthority?, refusal: String?) {
        do {
            let authority = RoomAuthority(state: try await client.roomState(room, as: bot))
            return (authority, authority.mayManageBridge(sender)?.description)
        } catch {
            logger.warning("Could not read the room's state", metadata: ["matrix.room.id": room.rawValue, "error": "\(error)"])
            return (nil, "The bridge could not read this room's power levels; try again later.")
        }
    }

    private func status(of room: RoomID) async -> String {
        if let request = pending.withLock({ $0[room] }) {
            return "Waiting for \(request.ownerNick) in \(request.muc) to allow linking this room."
        }
        guard let link = try? await links.links().first(where: { $0.matrixRoom == room }) else {
            return "This room is not linked. " + (settings.enabled
                ? "A member allowed to change its settings can link it: !isthmus link room@conference.example.org OWNER_NICK."
                : "Self-service linking is turned off on this bridge; its administrator links rooms.")
        }
        if link.unlinking { return "This room is being unlinked from \(link.muc)." }
        let state: String
        switch link.status {
        case .pending: state = "being set up"
        case .active: state = "active"
        case .error: state = "in trouble" + (link.detail.map { ": \($0)" } ?? "")
        }
        let xmpp = directory.isXMPPConnected ? "connected" : "disconnected (the bridge reconnects by itself)"
        return "This room is linked with \(link.muc): \(state). The bridge's XMPP connection is \(xmpp)."
    }

    /// Ends `room`'s link; the notice goes first, since the bot leaves the room with the link.
    private func unlink(_ room: RoomID, by sender: UserID, reply: @Sendable (String) async -> Void) async {
        guard settings.enabled else { return await reply("Self-service linking is turned off on this bridge; ask its administrator.") }
        guard let link = try? await links.links().first(where: { $0.matrixRoom == room && !$0.unlinking }) else {
            return await reply("This room is not linked.")
        }
        if let refusal = await authorize(sender, in: room).refusal { return await reply(refusal) }
        await reply("Unlinking this room from \(link.muc): the bridge leaves both rooms now.")
        do {
            _ = try await links.unlink(.id(room))
            logger.info("Unlinked by a room command", metadata: ["matrix.room.id": room.rawValue, "xmpp.muc": link.muc.description])
        } catch {
            await reply("Not unlinked after all: \(error).")
        }
    }
}
