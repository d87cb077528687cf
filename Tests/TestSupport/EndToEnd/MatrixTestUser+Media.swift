import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Media for the end-to-end tests: uploading a file and sending it as a media message, and downloading a file
/// through authenticated media (spec v1.11), over plain HTTP independent of the bridge.
extension MatrixTestUser {
    /// Uploads `data` (`POST /_matrix/media/v3/upload`) and returns its `mxc://` URI.
    public func upload(_ data: Data, contentType: String, fileName: String) async throws -> String {
        var request = URLRequest(url: URL(string: baseURL.absoluteString + "/_matrix/media/v3/upload?filename="
                                          + MatrixTestUser.encode(fileName))!)
        request.httpMethod = "POST"
        request.timeoutInterval = 60
        request.setValue("Bearer \(accessToken)", forHTTPHeaderField: "Authorization")
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        request.httpBody = data
        let (answer, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200, let object = try JSONSerialization.jsonObject(with: answer) as? [String: Any],
              let uri = object["content_uri"] as? String else {
            throw Failure(status: status, body: String(decoding: answer, as: UTF8.self))
        }
        return uri
    }

    /// Downloads `mxc` through `GET /_matrix/client/v1/media/download/…` with this user's token: its bytes and
    /// `Content-Type`.
    public func download(_ mxc: String) async throws -> (data: Data, contentType: String?) {
        let path = mxc.dropFirst("mxc://".count)
        var request = URLRequest(url: URL(string: baseURL.absoluteString + "/_matrix/client/v1/media/download/" + path)!)
        request.timeoutInterval = 60
        request.setValue("Bearer \(accessToken)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        guard http?.statusCode == 200 else { throw Failure(status: http?.statusCode ?? 0, body: String(decoding: data, as: UTF8.self)) }
        return (data, http?.value(forHTTPHeaderField: "Content-Type"))
    }

    /// Uploads `data` and sends it as a `msgtype` message (`m.image`, `m.file` …) with `body`, `filename` and `info`.
    @discardableResult
    public func sendFile(_ data: Data, msgtype: String, contentType: String, fileName: String, body: String? = nil,
                         info: [String: Any] = [:], to room: String) async throws -> (eventID: String, mxc: String) {
        let mxc = try await upload(data, contentType: contentType, fileName: fileName)
        var fullInfo = info
        fullInfo["mimetype"] = contentType
        fullInfo["size"] = data.count
        let eventID = try await send(body ?? fileName, to: room, msgtype: msgtype,
                                     extra: ["url": mxc, "filename": fileName, "info": fullInfo])
        return (eventID, mxc)
    }
}

/// A plain HTTP fetch for the tests (the XMPP side fetching an OOB link): status, headers and body.
public enum TestHTTP {
    public struct Answer: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data
    }

    public static func get(_ url: String, method: String = "GET", headers: [String: String] = [:]) async throws -> Answer {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.timeoutInterval = 60
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] { fields[String(describing: name).lowercased()] = String(describing: value) }
        return Answer(status: http?.statusCode ?? 0, headers: fields, body: data)
    }
}
