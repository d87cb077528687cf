import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import Matrix
import MatrixAccount
import MatrixClient
import MatrixCrypto
import Media

/// The Matrix side of `serve`, of the configured mode: the application service (the bot and its ghosts on the
/// as_token; the homeserver pushes transactions to the listener), or the ordinary account (its stored session; the
/// bridge syncs, and XMPP occupants speak through the account).
struct MatrixSide: Sendable {
    /// As the bot (as_token), or as the account (its session's tokens).
    let client: MatrixClient
    /// The link acting as the bot (or the account).
    let link: AppServiceMatrixLink
    /// What the bridge core is given: ``link``, or in client mode a ``RelayMatrixLink`` over it.
    let bridgeLink: any MatrixLink
    let botUserID: UserID
    /// Files both ways: as the application service (the listener serves Matrix files as signed links), or as the
    /// account (no listener: Matrix files reach XMPP through the XMPP server's upload service only).
    let media: MediaSettings
    /// Client mode: how occupants' messages read, and the intake.
    let relay: MatrixRelayFormat?
    let sync: (any MatrixSyncSource)?
    /// Client mode: the account's session (for `/ready`'s stall reason).
    let keeper: SessionKeeper?
    /// `encryption.allow`: the ghosts' encryption devices (the link encrypts their messages in encrypted rooms).
    var ghostDevices: GhostDevices? = nil

    var isAppService: Bool { sync == nil }
}

extension BridgeRuntime {
    /// The Matrix side of ``Config/Matrix/mode``. Reads the store (the media links' secret); no network I/O.
    func makeMatrixSide(store: Store, metrics: BridgeMetrics) async throws -> MatrixSide {
        let linkLogger = logger.with(label: "matrix.link")
        if let account = config.matrix.client {
            guard let namespace = GhostNamespace(prefix: config.appservice.ghostPrefix, serverName: config.matrix.serverName,
                                                 botLocalpart: account.userID.localpart) else {
                throw StartError(description: "matrix.client.user_id and the ghost prefix do not form valid Matrix user ids")
            }
            let (client, keeper) = AccountClient.make(config, account, store: store, logger: logger, metrics: metrics)
            let link = AppServiceMatrixLink(client: client, namespace: namespace, logger: linkLogger, metrics: metrics)
            // Files and avatars go as the account, with its session's token of the moment: an occupant's avatar is
            // uploaded by the account and named in its messages' profiles; Matrix users' avatars reach their puppets.
            let media = mediaSettings(identity: .account(keeper), signer: nil)
            return MatrixSide(client: client, link: link, bridgeLink: RelayMatrixLink(account: link), botUserID: account.userID,
                              media: media, relay: MatrixRelayFormat(format: config.relay.matrixFormat),
                              sync: AccountSyncSource(client: client, account: account.userID), keeper: keeper)
        }
        guard let namespace = GhostNamespace(prefix: config.appservice.ghostPrefix, serverName: config.matrix.serverName,
                                             botLocalpart: config.appservice.botLocalpart) else {
            throw StartError(description: "the config's names do not form valid Matrix user ids")
        }
        let client = MatrixClient(
            configuration: .init(homeserverURL: config.matrix.homeserverURL, accessToken: config.appservice.asToken, maxConnectionsPerHost: 32),
            logger: logger.with(label: "matrix.client"))
        let media = mediaSettings(identity: .appService(token: config.appservice.asToken),
                                  signer: MediaLinkSigner(publicBase: config.media.publicBase(appserviceURL: config.appservice.url),
                                                          secret: try await store.secret(named: "media_links")))
        let devices = encryptionDevices(store: store, client: client, namespace: namespace)
        let link = AppServiceMatrixLink(client: client, namespace: namespace, logger: linkLogger, metrics: metrics, encryption: devices,
                                        encryptsCreatedRooms: config.encryption.encryptsCreatedRooms)
        return MatrixSide(client: client, link: link, bridgeLink: link, botUserID: namespace.botUserID, media: media,
                          relay: nil, sync: nil, keeper: nil, ghostDevices: devices)
    }

    /// `encryption.allow` (the application service only: the config check refuses it otherwise).
    private func encryptionDevices(store: Store, client: MatrixClient, namespace: GhostNamespace) -> GhostDevices? {
        guard config.encryption.allow, let secret = config.encryption.pickleKey else { return nil }
        return GhostDevices(store: store, homeserver: client, pickleKey: PickleKey(secret: secret),
                            logger: logger.with(label: "bridge.encryption"),
                            isBridgeUser: { namespace.isOurs($0) })
    }

    /// `media:` of the config, for the bridge as `identity`.
    private func mediaSettings(identity: MediaIdentity, signer: MediaLinkSigner?) -> MediaSettings {
        var media = MediaSettings(
            homeserverURL: config.matrix.homeserverURL, identity: identity,
            caFile: ProcessInfo.processInfo.environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }, signer: signer,
            maxSize: config.media.maxSize, allowPrivateAddresses: config.media.allowPrivateAddresses,
            stallTimeout: config.media.stallTimeout, maxConcurrentTransfers: config.media.maxConcurrentTransfers)
        media.xmppUpload = config.media.xmppUpload
        return media
    }
}
