import IsthmusCommon
import IsthmusStore

/// What the portals, ``DirectChats`` and the ``SelfServiceDesk`` share: the store, both links, naming, logger, clock,
/// metrics, the disk-full gate, and the optional DM, media and avatar services. A value: ``Bridge`` fills its `var`
/// fields once in its `init`, before handing out copies (``DirectChats``' copy has no `directChats`, being made before
/// it); ``with(logger:)`` makes a copy that logs under another label.
struct BridgeContext: Sendable {
    let store: Store
    let xmpp: any XMPPLink
    let matrix: any MatrixLink
    let naming: BridgeNaming
    private(set) var logger: Logger
    /// The time source of every decision.
    let clock: TimeSource
    /// Counters, gauges and latencies (see ``BridgeMetrics``).
    let metrics: BridgeMetrics
    /// Closed while the disk is full (see ``StoreWriteGate``).
    let writeGate: StoreWriteGate
    /// Called when a portal's status changes or it finished unlinking (the bridge service observes it).
    let notify: @Sendable (PortalNotice) -> Void
    /// Where private messages and DM rooms are handled (nil: nowhere, as in tests that do not need them).
    var directChats: DirectChats? = nil
    /// The power level each MUC position gives a ghost (config `power_levels:`).
    var roleLevels = RoleLevels()
    /// Media both ways (links to Matrix files, fetching XMPP files); nil: media messages go as text.
    var media: MediaSettings? = nil
    /// Fetches XMPP users' files and uploads them (one for the whole bridge: it bounds the transfers); nil with `media`.
    var mediaImporter: MediaImporter? = nil
    /// Re-uploads Matrix files to the XMPP server's XEP-0363 service (`media.xmpp_upload`); nil: the bridge's links.
    var xmppUploader: XMPPUploader? = nil
    /// Moves avatar images across (one for the whole bridge); nil with `media`: avatars are not bridged.
    var avatars: AvatarFetcher? = nil
    /// Client mode: Matrix users speak through the bridge's own occupant, in this format (nil: through puppets).
    var relay: RelayFormat? = nil
    /// Matrix client mode: XMPP occupants speak through the bridge's Matrix account in this format (nil: ghosts).
    var matrixRelay: MatrixRelayFormat? = nil
    /// Client mode: how requests to see the account's presence are answered.
    var subscriptions = SubscriptionDesk(policy: .none)
    /// Bounds how many portals activate at once (one for the whole bridge).
    var activations = ActivationGate()
    /// The ghosts' encryption devices (`encryption.allow`; nil: off).
    var ghostDevices: GhostDevices? = nil
    /// `encryption:`: which rooms are bridged by their encryption.
    var encryptedRooms = EncryptedRoomPolicy.refused

    /// The same context, logging to `logger`.
    func with(logger: Logger) -> BridgeContext {
        var copy = self
        copy.logger = logger
        return copy
    }
}

/// What portals tell the bridge service.
enum PortalNotice: Sendable {
    case status(RoomID, RoomLink.Status)
    case unlinked(RoomID)
    /// The link moved from this (upgraded) room to its replacement: the bridge loads the new portal.
    case moved(from: RoomID)
}
