import IsthmusCommon
import IsthmusStore
import TestSupport
import Testing

/// `matrix_sessions`: the Matrix account's session in client mode, per user id on both backends.
@Suite struct MatrixSessionTableTests {
    let relay = UserID("@relay:example.org")!

    @Test(arguments: StoreBackend.all) func aSessionIsKeptRotatedInPlaceAndForgotten(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let store = fixture.store
        #expect(try await store.matrixSession(of: relay) == nil)
        let first = StoredMatrixSession(userID: relay, deviceID: DeviceID("ISTHMUSRELAY")!, accessToken: AccessToken("syt_cmVsYXk_first_0")!,
                                        refreshToken: RefreshToken("syr_cmVsYXk_first_0")!, expiresAt: 1_750_000_300_000, authAPI: "legacy")
        try await store.saveMatrixSession(first)
        #expect(try await fixture.reopen().matrixSession(of: relay) == first, "kept across a reopen")
        var rotated = first
        rotated.accessToken = AccessToken("syt_cmVsYXk_second_1")!
        rotated.refreshToken = RefreshToken("syr_cmVsYXk_second_1")!
        rotated.expiresAt = 9_223_372_036_854_775_807
        try await store.saveMatrixSession(rotated)
        #expect(try await store.matrixSession(of: relay) == rotated, "the pair replaced in one row; the largest expiry fits")
        var forever = rotated
        forever.refreshToken = nil
        forever.expiresAt = nil
        forever.authAPI = "oauth"
        forever.oauthClientID = "01JCLIENT"
        try await store.saveMatrixSession(forever)
        #expect(try await store.matrixSession(of: relay) == forever, "no refresh token, no expiry; an OAuth 2.0 client id")
        #expect(try await store.matrixSession(of: UserID("@other:example.org")!) == nil, "another account has none of it")
        #expect(try await store.deleteMatrixSession(of: relay))
        #expect(try await store.matrixSession(of: relay) == nil)
        #expect(try await !store.deleteMatrixSession(of: relay), "nothing left to forget")
    }
}
