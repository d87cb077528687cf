import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension MatrixTestUser {
    /// Joins a room by `alias` (`POST /join/{alias}`) and returns its id; throws ``Failure`` (404 for an alias the
    /// homeserver and its appservices do not know).
    public func join(alias: String) async throws -> String {
        let json = try await call("POST", "/_matrix/client/v3/join/\(Self.encode(alias))", body: [:])
        return json["room_id"] as! String
    }

    /// The room `alias` names now (`GET /directory/room/{alias}`); nil when it names none (404).
    public func resolve(alias: String) async throws -> String? {
        do {
            return try await call("GET", "/_matrix/client/v3/directory/room/\(Self.encode(alias))", body: nil)["room_id"] as? String
        } catch let failure as Failure where failure.status == 404 {
            return nil
        }
    }

    /// `GET /thirdparty/protocols`: the names of the protocols the homeserver's appservices answer for.
    public func thirdPartyProtocols() async throws -> Set<String> {
        Set(try await call("GET", "/_matrix/client/v3/thirdparty/protocols", body: nil).keys)
    }

    /// `GET /thirdparty/location/{protocol}?…`: the aliases of the locations `fields` name (empty when none).
    public func thirdPartyAliases(protocol name: String, _ fields: [String: String]) async throws -> [String] {
        let query = fields.map { "\(Self.encode($0.key))=\(Self.encode($0.value))" }.joined(separator: "&")
        let url = baseURL.absoluteString + "/_matrix/client/v3/thirdparty/location/\(Self.encode(name))?\(query)"
        var request = URLRequest(url: URL(string: url)!)
        request.setValue("Bearer \(accessToken)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if status == 404 { return [] }
        guard status == 200 else { throw Failure(status: status, body: String(decoding: data, as: UTF8.self)) }
        let array = (try JSONSerialization.jsonObject(with: data) as? [[String: Any]]) ?? []
        return array.compactMap { $0["alias"] as? String }
    }

    /// Lists `room` in the homeserver's public room directory.
    public func publish(_ room: String) async throws {
        _ = try await call("PUT", "/_matrix/client/v3/directory/list/room/\(Self.encode(room))", body: ["visibility": "public"])
    }
}
