import IsthmusCommon
import Matrix
import MatrixClient

/// The production ``MatrixSyncSource``: the account's `/sync` with a filter for what the bridge acts on — room
/// timelines (at most 50 events a batch; a longer gap is `limited` and filled from the timeline), members loaded
/// lazily, and no presence, typing, receipts or account data (client mode bridges none of them).
public struct AccountSyncSource: MatrixSyncSource {
    let client: MatrixClient
    let account: UserID

    public init(client: MatrixClient, account: UserID) {
        self.client = client
        self.account = account
    }

    /// The inline filter (client-server API §8.1 "Filtering").
    static let filter = #"{"presence":{"types":[]},"account_data":{"types":[]},"room":{"timeline":{"limit":50},"#
        + #""state":{"lazy_load_members":true},"ephemeral":{"types":[]},"account_data":{"types":[]}}}"#

    public func sync(since: String?, wait: Duration) async throws -> SyncResponse {
        try await client.sync(since: since, filter: Self.filter, wait: wait, as: account)
    }

    public func joinedRooms() async throws -> [RoomID]? {
        try await client.joinedRooms()
    }
}
