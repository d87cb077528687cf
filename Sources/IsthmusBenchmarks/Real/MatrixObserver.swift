import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A Matrix user's `/sync` long-poll (client-server API §8.1): every `m.room.message` in `room` from a sender other
/// than `ignoring` is handed to ``MessageTracker`` the moment the sync response arrives.
final class MatrixObserver: Sendable {
    private let homeserver: String
    private let token: String
    private let room: String
    private let ignoring: String
    private let session: URLSession
    private let since = Mutex<String?>(nil)

    init(homeserver: String, token: String, room: String, ignoring: String) {
        self.homeserver = homeserver
        self.token = token
        self.room = room
        self.ignoring = ignoring
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 90
        session = URLSession(configuration: configuration)
    }

    private struct SyncResponse: Decodable {
        struct Rooms: Decodable { var join: [String: JoinedRoom]? }
        struct JoinedRoom: Decodable { var timeline: Timeline? }
        struct Timeline: Decodable { var events: [Event] }
        struct Event: Decodable {
            var type: String
            var sender: String
            var content: Content?
        }
        struct Content: Decodable { var body: String? }
        var nextBatch: String
        var rooms: Rooms?
        enum CodingKeys: String, CodingKey {
            case nextBatch = "next_batch"
            case rooms
        }
    }

    /// Takes the current position (everything before it is ignored).
    func start() async throws {
        _ = try await sync(timeout: 0)
    }

    /// Long-polls until the task is cancelled.
    func run() async {
        while !Task.isCancelled {
            do {
                for event in try await sync(timeout: 30_000) where event.type == "m.room.message" && event.sender != ignoring {
                    if let body = event.content?.body { MessageTracker.arrived(body: body.utf8) }
                }
            } catch {
                if Task.isCancelled { return }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    private func sync(timeout: Int) async throws -> [SyncResponse.Event] {
        let filter = #"{"room":{"timeline":{"limit":1000},"state":{"lazy_load_members":true},"ephemeral":{"not_types":["*"]}},"presence":{"not_types":["*"]},"account_data":{"not_types":["*"]}}"#
        var components = URLComponents(string: homeserver + "/_matrix/client/v3/sync")!
        var items = [URLQueryItem(name: "timeout", value: String(timeout)), URLQueryItem(name: "filter", value: filter)]
        if let since = since.withLock({ $0 }) { items.append(URLQueryItem(name: "since", value: since)) }
        components.queryItems = items
        var request = URLRequest(url: components.url!)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.timeoutInterval = 90
        let (data, _) = try await session.data(for: request)
        let response = try JSONDecoder().decode(SyncResponse.self, from: data)
        since.withLock { $0 = response.nextBatch }
        return response.rooms?.join?[room]?.timeline?.events ?? []
    }
}
