import FoundationEssentials
import IsthmusCommon
import Matrix
import MatrixAppService

/// The core's side of the appservice listener: turns a homeserver transaction into the bridge's durable inbox.
///
/// Only what portals and the DMs act on is kept: messages and memberships of linked rooms and DM rooms, leaving out
/// what our own users sent unless it is a membership of someone else (see
/// ``Bridge/acceptMatrixEvents(_:transaction:)``). `handle` writes those and the transaction's id in one commit and
/// returns once it is durable, so the listener acknowledges the transaction only when it is safe; then it hands
/// invitations and `!isthmus` commands to the self-service desk, and typing and receipts to the portals (best effort,
/// not stored).
public struct BridgeAppServiceHandler: AppServiceHandler {
    let bridge: Bridge
    let namespace: GhostNamespace
    let logger: Logger

    public init(bridge: Bridge, namespace: GhostNamespace, logger: Logger) {
        self.bridge = bridge
        self.namespace = namespace
        self.logger = logger
    }

    public func handle(_ transaction: Transaction) async throws {
        let (clientEvents, released) = try await decrypted(transaction)
        let events = clientEvents.compactMap(BridgeAppServiceHandler.roomEvent)
            .filter { !namespace.isOurs($0.sender) || $0.stateKey.flatMap(UserID.init).map { !namespace.isOurs($0) } == true }
        try await bridge.acceptMatrixEvents(events, transaction: transaction.id)
        // Queued with this transaction: the held events its keys released are no longer held (a crash before this
        // releases them again; the inbox keeps an event once).
        if !released.isEmpty { try await bridge.context.ghostDevices?.forgetHeld(released) }
        bridge.metrics.transactionAccepted()
        // Invitations and `!isthmus` commands, once the transaction is durable (commands in linked rooms were queued
        // above too; their portals drop them: commands are never bridged).
        bridge.selfService?.accept(transaction.events)
        // Typing and receipts: best effort, after the durable part (a transaction that failed is retried with them).
        for (room, event) in BridgeAppServiceHandler.ephemeral(transaction.ephemeral, isOurs: namespace.isOurs) {
            bridge.routeEphemeral(event, to: room)
            await bridge.gatewayRooms?.ephemeral(event, in: room)   // in order: a stop must not overtake its start
        }
    }

    /// The transaction's events with what the ghosts' devices can decrypt decrypted (`encryption.allow`), after the
    /// room keys its to-device messages bring are kept; first the held events those keys release (with their ids).
    /// An event whose key has not come yet is held rather than queued (``GhostDevices/hold(_:now:)``); one that does
    /// not decrypt for another reason stays encrypted: the room is told it was not bridged.
    private func decrypted(_ transaction: Transaction) async throws -> (events: [ClientEvent], released: [EventID]) {
        guard let devices = bridge.context.ghostDevices else { return (transaction.events, []) }
        if !transaction.deviceListsChanged.isEmpty { await devices.noteDeviceListsChanged(transaction.deviceListsChanged) }
        devices.topUp(transaction.keyCounts)
        var keys: [(room: RoomID, sessionID: String)] = []
        if !transaction.toDevice.isEmpty {
            for case .roomKey(let room, let sessionID) in try await devices.receive(transaction.toDevice) { keys.append((room, sessionID)) }
        }
        var events: [ClientEvent] = []
        var waiting: [(event: ClientEvent, sessionID: String)] = []
        for event in transaction.events {
            switch event.content {
            case .unknown(type: MatrixEventType.encrypted, _) where !namespace.isOurs(event.sender):
                switch try await devices.decrypt(event) {
                case .decrypted(let clear): events.append(clear)
                case .missingKey(let sessionID): waiting.append((event, sessionID))
                case .refused: events.append(event)
                }
                continue
            case .unknown(type: MatrixEventType.encryption, let content) where event.stateKey == "":
                await devices.noteEncryption(event.roomID, content: content)
                devices.prepareJoinedGhosts(of: event.roomID)
            case .member(let member):
                await devices.noteMembership(event.roomID, membership: member.membership)
            case .unknown(type: MatrixEventType.historyVisibility, _) where event.stateKey == "":
                await devices.noteHistoryVisibility(event.roomID)
            default:
                break
            }
            events.append(event)
        }
        let held = try await devices.hold(waiting)
        // Not held (not a room the bridge serves): queued as they are, as before.
        events += waiting.map(\.event).filter { !held.contains($0.eventID) }
        let released = try await devices.released(by: keys)
        return (released + events, released.map(\.eventID))
    }

    public func isProcessed(_ id: TransactionID) async throws -> Bool {
        try await bridge.isTransactionProcessed(id)
    }

    public func seenMessages(_ events: [EventID], in room: RoomID) async throws -> Set<EventID> {
        try await bridge.seenMatrixEvents(events, in: room)
    }

    public func userExists(_ user: UserID) async -> Bool {
        await bridge.isKnownGhost(user)
    }

    /// A gateway alias opens its MUC (``DynamicPortals``); any other alias in our namespace does not exist.
    public func roomAliasExists(_ alias: RoomAlias) async -> Bool {
        await bridge.gateway?.aliasQueried(alias) ?? false
    }

    /// Protocol `xmpp` while the gateway is on (``GatewayDirectory``).
    public func thirdPartyProtocol(_ name: String) async -> ThirdPartyProtocol? {
        bridge.gateway?.directory.protocolDescription(name)
    }

    public func thirdPartyLocations(protocol name: String?, fields: [String: String]) async -> [ThirdPartyLocation] {
        bridge.gateway?.directory.locations(protocol: name, fields: fields) ?? []
    }

    /// The bridge's view of a client event; nil for events portals do not act on yet.
    static func roomEvent(_ event: ClientEvent) -> MatrixRoomEvent? {
        switch event.content {
        case .message(let content):
            if let original = content.relatesTo?.replacedEventID {
                // An edit: what it now reads is `m.new_content` (spec §11.37); without one there is nothing to bridge.
                guard let new = content.newContent else { return nil }
                // The mentions of the message as edited are m.new_content's; the outer ones only name who is newly
                // mentioned (to be pinged), so they are the fallback for clients that leave the inner ones out.
                let details = MessageDetails(html: new.format == MessageContent.htmlFormat ? new.formattedBody : nil,
                                             replaces: original, mentions: new.mentions?.userIDs ?? content.mentions?.userIDs)
                return MatrixRoomEvent(eventID: event.eventID, room: event.roomID, sender: event.sender,
                                       content: .message(msgtype: new.messageType, body: new.body, details: details))
            }
            // A media message whose `url` is not a valid `mxc://` URI, or whose encrypted `file` cannot be opened, goes
            // as its text.
            let media = content.messageType.isMedia ? Self.attachment(url: content.url, file: content.file, fileName: content.fileName, info: content.info) : nil
            let details = MessageDetails(html: content.html, replyTo: content.relatesTo?.replyToEventID,
                                         mentions: content.mentions?.userIDs, media: media)
            return MatrixRoomEvent(eventID: event.eventID, room: event.roomID, sender: event.sender,
                                   content: .message(msgtype: content.messageType, body: content.body,
                                                     details: details.orNilWhenEmpty))
        case .reaction(let content):
            guard let target = content.targetEventID, let key = content.key, !key.isEmpty else { return nil }
            return MatrixRoomEvent(eventID: event.eventID, room: event.roomID, sender: event.sender,
                                   content: .reaction(target: target, key: key))
        case .redaction(let content):
            guard let target = event.redactedEventID else { return nil }
            return MatrixRoomEvent(eventID: event.eventID, room: event.roomID, sender: event.sender,
                                   content: .redaction(target: target, reason: content.reason))
        case .member(let content):
            guard let stateKey = event.stateKey else { return nil }
            var previousMembership: Membership?
            var previousName: String?
            if case .object(let previous)? = event.unsigned?.previousContent {
                if case .string(let value)? = previous["membership"] { previousMembership = Membership(rawValue: value) }
                if case .string(let value)? = previous["displayname"] { previousName = value }
            }
            var member = MatrixRoomEvent(eventID: event.eventID, room: event.roomID, sender: event.sender, stateKey: stateKey,
                                         content: .member(membership: content.membership, displayname: content.displayName,
                                                          reason: content.reason),
                                         previousMembership: previousMembership, previousDisplayname: previousName)
            member.avatarURL = content.avatarURL.flatMap(MXCURI.init(mxc:))   // anything else counts as none
            member.isDirect = content.isDirect
            if content.membership == .invite, let state = event.unsigned?.inviteRoomState {
                member.invitedToEncryptedRoom = state.contains { stripped in
                    if case .object(let members) = stripped, case .string(MatrixEventType.encryption)? = members["type"] { return true }
                    return false
                }
            }
            return member
        case .roomTopic(let content) where event.stateKey == "":
            return MatrixRoomEvent(eventID: event.eventID, room: event.roomID, sender: event.sender, stateKey: "",
                                   content: .topic(content.topic ?? ""))
        case .tombstone(let content) where event.stateKey == "":
            return MatrixRoomEvent(eventID: event.eventID, room: event.roomID, sender: event.sender, stateKey: "",
                                   content: .tombstone(replacement: content.replacementRoom, body: content.body))
        case .powerLevels(let content):
            guard event.stateKey == "" else { return nil }
            let users = content.userLevels
            return MatrixRoomEvent(eventID: event.eventID, room: event.roomID, sender: event.sender, stateKey: "",
                                   content: .powerLevels(users: users, usersDefault: content.usersDefault ?? 0))
        case .unknown(type: MatrixEventType.encrypted, _):
            // Never dropped in silence: the portal or the DM tells the room that it was not bridged.
            return MatrixRoomEvent(eventID: event.eventID, room: event.roomID, sender: event.sender, content: .encrypted)
        case .unknown(type: MatrixEventType.encryption, _) where event.stateKey == "":
            return MatrixRoomEvent(eventID: event.eventID, room: event.roomID, sender: event.sender, stateKey: "",
                                   content: .encryptionEnabled)
        case .unknown(type: MatrixEventType.sticker, let content):
            // A sticker (spec §11.14) is an image: bridged like m.image (its body is a description, not a caption).
            guard let sticker = try? JSONDecoder().decode(StickerContent.self, from: JSONEncoder().encode(content)),
                  sticker.url != nil || sticker.file != nil else { return nil }
            let body = sticker.body ?? "sticker"
            // One whose `url` is not a valid `mxc://` URI (or whose `file` cannot be opened) goes as its description.
            let media = Self.attachment(url: sticker.url, file: sticker.file, fileName: nil, info: sticker.info)
            return MatrixRoomEvent(eventID: event.eventID, room: event.roomID, sender: event.sender, content: .message(
                msgtype: .image, body: body, details: MessageDetails(media: media)))
        default:
            return nil
        }
    }

    /// A media event's file: at `url`, or encrypted (`file`, in an encrypted room); nil when neither can be read.
    static func attachment(url: String?, file: EncryptedFile?, fileName: String?, info: MediaInfo?) -> MatrixAttachment? {
        if let url { return MXCURI(mxc: url).map { MatrixAttachment(mxc: $0, fileName: fileName, info: info) } }
        return file.flatMap { MatrixAttachment(file: $0, fileName: fileName, info: info) }
    }
}

/// `m.sticker` content (spec §11.14.1): a description, the image (`url`, or `file` when encrypted) and its info.
/// Pure value.
private struct StickerContent: Decodable {
    var body: String?
    var url: String?
    var file: EncryptedFile?
    var info: MediaInfo?
}
