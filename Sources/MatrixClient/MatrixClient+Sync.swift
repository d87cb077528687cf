import FoundationEssentials
import IsthmusCommon
import Matrix

extension MatrixClient {
    /// `GET /_matrix/client/v3/sync` as `account` (the token's own user): what happened since `since` (nil: an
    /// initial sync), waiting up to `wait` for something to happen (client-server API §10.5.1). `filter`: an inline
    /// filter (JSON) or a filter id. `set_presence=offline`: a bridge account is no one to show online. The request
    /// may take `wait` plus the client's usual timeout. Network failures and 5xx are retried per the client's policy
    /// (a sync changes nothing: repeating it is safe).
    public func sync(since: String?, filter: String?, wait: Duration, as account: UserID) async throws(MatrixError) -> SyncResponse {
        var query: [(String, String)] = [("timeout", String(Int((wait / .milliseconds(1)).rounded()))), ("set_presence", "offline")]
        if let since { query.append(("since", since)) }
        if let filter { query.append(("filter", filter)) }
        var request = ClientRequest(.sync, "GET", ["_matrix/client/v3/sync"], query: query)
        request.timeout = wait + configuration.requestTimeout
        let (data, attempts) = try await send(request)
        let decoder = JSONDecoder()
        decoder.userInfo[SyncResponse.accountKey] = account
        do {
            return try decoder.decode(SyncResponse.self, from: data)
        } catch {
            throw MatrixError(kind: .invalidResponse, call: request.call, endpoint: request.endpoint, status: 200,
                              message: "unexpected sync body: \(error)", attempts: attempts)
        }
    }
}
