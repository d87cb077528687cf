import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixAppService
import MatrixClient
import TestSupport

/// The appservice side of one real-Synapse test: a store file, the listener on the bed's appservice port running in
/// a task, the appservice client and the ghost namespace of the bed's config.
final class SynapseHarness: @unchecked Sendable {
    let bed: TestBed
    let storePath: String
    let handler: RecordingAppServiceHandler
    let client: MatrixClient
    let namespace = GhostNamespace(prefix: "_xmpp_", serverName: "localhost", botLocalpart: "isthmus")!
    private(set) var listener: AppServiceListener?
    private var runTask: Task<Void, Never>?

    init(bed: TestBed) throws {
        self.bed = bed
        storePath = FileManager.default.temporaryDirectory.appendingPathComponent("isthmus-matrix-\(UUID().uuidString).sqlite").path
        handler = RecordingAppServiceHandler()
        client = MatrixClient(configuration: .init(homeserverURL: bed.synapseURL, accessToken: bed.asToken, requestTimeout: .seconds(15)),
                              logger: .disabled)
    }

    /// Opens the store (again) and starts a listener on the bed's appservice port, then pings so Synapse delivers at once.
    func startListener(pingAfterwards: Bool = true) async throws {
        let store = try Store(path: storePath, logger: .disabled)
        handler.use(store)
        let listener = try AppServiceListener(
            configuration: .init(host: "127.0.0.1", port: bed.appServicePort, hsToken: bed.hsToken),
            handler: handler, logger: .disabled)
        self.listener = listener
        runTask = Task { await listener.run() }
        if pingAfterwards { _ = try await client.ping(appServiceID: "isthmus") }
    }

    /// Shuts the listener down and waits until its socket is closed.
    func stopListener() async {
        listener?.shutdown()
        await runTask?.value
        listener = nil
        runTask = nil
    }

    /// A client logged in as the test user `name` with a password.
    func userClient(_ name: String) async throws -> (MatrixClient, UserID) {
        let anonymous = MatrixClient(configuration: .init(homeserverURL: bed.synapseURL, accessToken: ""), logger: .disabled)
        let login = try await anonymous.login(user: name, password: bed.password)
        return (MatrixClient(configuration: .init(homeserverURL: bed.synapseURL, accessToken: login.accessToken.secret), logger: .disabled), login.userID)
    }

    /// A room created by `user` with the bot invited and joined, so Synapse pushes the room's events to the listener.
    func roomWithBot(_ user: MatrixClient, preset: String = "public_chat", aliasName: String? = nil) async throws -> RoomID {
        let room = try await user.createRoom(CreateRoomRequest(preset: preset, name: "isthmus test", roomAliasName: aliasName,
                                                               invite: [namespace.botUserID]))
        _ = try await client.join(room)
        return room
    }

    func removeStore() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: storePath + suffix) }
    }
}
