import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import IsthmusCommon
import TestSupport
import Testing

/// The OAuth 2.0 homeserver double (``FakeAuthorizationServer``) over real HTTP, against the specs it stands in for:
/// RFC 8414 metadata, RFC 7591 registration, RFC 8628 device grant, RFC 6749/7636 code grant with PKCE, RFC 6749 §6
/// refresh with rotation, RFC 7009 revocation, and the client-server API's `whoami` and soft logout. Time is manual.
@Suite struct FakeAuthorizationServerTests {
    static let device = "ISTHMUSDEV01"
    static let scope = "urn:matrix:client:api:* urn:matrix:client:device:\(device)"
    /// RFC 7636 Appendix B.
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    static let registration = registration()

    /// The JSON of Isthmus's client metadata (RFC 7591 §2) with `changes` applied (nil removes a field).
    static func registration(_ changes: [String: Any?] = [:]) -> String {
        var metadata: [String: Any?] = [
            "client_name": "Isthmus", "client_uri": "https://isthmus.example.org/", "application_type": "native",
            "grant_types": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
            "response_types": ["code"], "redirect_uris": ["http://127.0.0.1/callback"], "token_endpoint_auth_method": "none",
        ]
        metadata.merge(changes) { _, new in new }
        let data = try! JSONSerialization.data(withJSONObject: metadata.compactMapValues { $0 }, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    let time = ManualTime()

    /// Runs `body` with a double serving (it stops afterwards).
    func serving(offersDeviceGrant: Bool = true, _ body: (FakeAuthorizationServer, OAuthWire) async throws -> Void) async throws {
        let fake = try FakeAuthorizationServer(userID: "@relay:localhost", accessTokenLifetime: 300, offersDeviceGrant: offersDeviceGrant,
                                               time: time.timeSource)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await fake.run() }
            defer { fake.stop() }
            try await body(fake, OAuthWire(base: fake.url.absoluteString))
        }
    }

    /// Registers the standard client; its id.
    func register(_ wire: OAuthWire) async throws -> String {
        let reply = try await wire.json("/oauth2/registration", Self.registration)
        #expect(reply.status == 201)
        return try #require(reply["client_id"])
    }

    /// Signs in through the device grant; the token answer.
    func deviceLogin(_ fake: FakeAuthorizationServer, _ wire: OAuthWire, client: String) async throws -> OAuthWire.Reply {
        let start = try await wire.form("/oauth2/device", ["client_id": client, "scope": Self.scope])
        #expect(fake.approve(userCode: try #require(start["user_code"])))
        let tokens = try await wire.form("/oauth2/token", ["grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                                                          "device_code": try #require(start["device_code"]), "client_id": client])
        #expect(tokens.status == 200)
        return tokens
    }

    @Test func metadataNamesTheEndpointsAndThereIsNoLegacyLogin() async throws {
        try await serving { fake, wire in
            let base = fake.url.absoluteString
            let metadata = try await wire.get("/_matrix/client/v1/auth_metadata")
            #expect(metadata.status == 200 && metadata.header("content-type") == "application/json")
            #expect(metadata["issuer"] == base + "/")
            #expect(metadata["authorization_endpoint"] == base + "/oauth2/authorize")
            #expect(metadata["token_endpoint"] == base + "/oauth2/token")
            #expect(metadata["revocation_endpoint"] == base + "/oauth2/revoke")
            #expect(metadata["registration_endpoint"] == base + "/oauth2/registration")
            #expect(metadata["device_authorization_endpoint"] == base + "/oauth2/device")
            #expect(metadata.strings("response_types_supported") == ["code"])
            #expect(metadata.strings("response_modes_supported") == ["query", "fragment"])
            #expect(metadata.strings("grant_types_supported")
                    == ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"])
            #expect(metadata.strings("code_challenge_methods_supported") == ["S256"])
            let login = try await wire.get("/_matrix/client/v3/login")
            #expect(login.status == 404 && login["errcode"] == "M_UNRECOGNIZED")
        }
        try await serving(offersDeviceGrant: false) { _, wire in
            let metadata = try await wire.get("/_matrix/client/v1/auth_metadata")
            #expect(metadata["device_authorization_endpoint"] == nil)
            #expect(metadata.strings("grant_types_supported") == ["authorization_code", "refresh_token"])
            let client = try await register(wire)
            #expect(try await wire.form("/oauth2/device", ["client_id": client, "scope": Self.scope]).status == 404)
            let poll = try await wire.form("/oauth2/token", ["grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                                                             "device_code": "dc_x", "client_id": client])
            #expect(poll.status == 400 && poll["error"] == "unsupported_grant_type")
        }
    }

    @Test func registrationRefusesWhatTheSpecForbids() async throws {
        try await serving { fake, wire in
            let changes: [([String: Any?], String)] = [
                (["client_uri": nil], "invalid_client_metadata"),
                (["client_uri": "http://isthmus.example.org/"], "invalid_client_metadata"),
                (["grant_types": ["authorization_code"]], "invalid_client_metadata"),
                (["grant_types": nil], "invalid_client_metadata"),
                (["token_endpoint_auth_method": "client_secret_basic"], "invalid_client_metadata"),
                (["token_endpoint_auth_method": nil], "invalid_client_metadata"),
                (["redirect_uris": ["https://isthmus.example.org/callback"]], "invalid_redirect_uri"),
                (["redirect_uris": ["http://127.0.0.1/callback#here"]], "invalid_redirect_uri"),
                (["redirect_uris": ["http://192.0.2.1/callback"]], "invalid_redirect_uri"),
            ]
            let refused = changes.map { change, error in (Self.registration(change), error) } + [("not json", "invalid_client_metadata")]
            for (body, error) in refused {
                let reply = try await wire.json("/oauth2/registration", body)
                #expect(reply.status == 400 && reply["error"] == error, "\(body): \(reply.text)")
            }
            #expect(fake.registeredClients == 0)
            let reply = try await wire.json("/oauth2/registration", Self.registration)
            #expect(reply.status == 201 && !(reply["client_id"] ?? "").isEmpty)
            #expect(reply.strings("redirect_uris") == ["http://127.0.0.1/callback"])
            #expect(reply["client_uri"] == "https://isthmus.example.org/" && reply["token_endpoint_auth_method"] == "none")
            let privateUse = try await wire.json("/oauth2/registration",
                                                 Self.registration(["redirect_uris": ["org.example.isthmus:/callback"]]))
            #expect(privateUse.status == 201)
            #expect(fake.registeredClients == 2)
        }
    }

    @Test func deviceFlowPendsSlowsDownThenGivesTokensOnce() async throws {
        try await serving { fake, wire in
            let client = try await register(wire)
            for scope in ["urn:matrix:client:device:\(Self.device)", "urn:matrix:client:api:* urn:matrix:client:device:SHORT",
                          Self.scope + " urn:matrix:client:device:OTHERDEVICE1"] {
                let reply = try await wire.form("/oauth2/device", ["client_id": client, "scope": scope])
                #expect(reply.status == 400 && reply["error"] == "invalid_scope", "\(scope)")
            }
            let stranger = try await wire.form("/oauth2/device", ["client_id": "nobody", "scope": Self.scope])
            #expect(stranger.status == 400 && stranger["error"] == "invalid_client")

            let start = try await wire.form("/oauth2/device", ["client_id": client, "scope": Self.scope])
            let userCode = try #require(start["user_code"])
            #expect(start.status == 200 && userCode.wholeMatch(of: /[A-Z]{4}-[A-Z]{4}/) != nil)
            #expect(start["verification_uri"] == fake.url.absoluteString + "/link")
            #expect(start["verification_uri_complete"] == fake.url.absoluteString + "/link?code=" + userCode)
            #expect(start.int("expires_in") == 600 && start.int("interval") == 1)
            let poll = ["grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": try #require(start["device_code"]),
                        "client_id": client]
            #expect(try await wire.form("/oauth2/token", poll)["error"] == "authorization_pending")
            #expect(try await wire.form("/oauth2/token", poll)["error"] == "slow_down")
            #expect(fake.pollInterval(userCode: userCode) == 6)
            time.advance(by: .seconds(6))
            #expect(try await wire.form("/oauth2/token", poll)["error"] == "authorization_pending")
            #expect(fake.approve(userCode: userCode.lowercased()))

            let tokens = try await wire.form("/oauth2/token", poll)
            #expect(tokens.status == 200 && tokens.header("cache-control") == "no-store")
            #expect(tokens["token_type"] == "Bearer" && tokens.int("expires_in") == 300 && tokens["scope"] == Self.scope)
            #expect(tokens["refresh_token"] != nil && fake.lastGrantedScope == Self.scope && fake.liveSessions == 1)
            let again = try await wire.form("/oauth2/token", poll)
            #expect(again.status == 400 && again["error"] == "invalid_grant")
            #expect(fake.tokenRequests["urn:ietf:params:oauth:grant-type:device_code"] == 5)
        }
    }

    @Test func deviceFlowDeniedOrExpired() async throws {
        try await serving { fake, wire in
            let client = try await register(wire)
            func poll(_ start: OAuthWire.Reply) async throws -> String? {
                try await wire.form("/oauth2/token", ["grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                                                     "device_code": start["device_code"] ?? "", "client_id": client])["error"]
            }
            let denied = try await wire.form("/oauth2/device", ["client_id": client, "scope": Self.scope])
            #expect(fake.deny(userCode: try #require(denied["user_code"])))
            #expect(try await poll(denied) == "access_denied")
            let expired = try await wire.form("/oauth2/device", ["client_id": client, "scope": Self.scope])
            #expect(fake.expire(userCode: try #require(expired["user_code"])))
            #expect(try await poll(expired) == "expired_token")
            let late = try await wire.form("/oauth2/device", ["client_id": client, "scope": Self.scope])
            time.advance(by: .seconds(601))
            #expect(try await poll(late) == "expired_token")
            #expect(fake.liveSessions == 0)
        }
    }

    @Test func refreshRotatesAndReuseRevokesTheSession() async throws {
        try await serving { fake, wire in
            let client = try await register(wire)
            func refresh(_ token: String, client: String = client) async throws -> OAuthWire.Reply {
                try await wire.form("/oauth2/token", ["grant_type": "refresh_token", "refresh_token": token, "client_id": client])
            }
            func whoami(_ token: String) async throws -> OAuthWire.Reply {
                try await wire.get("/_matrix/client/v3/account/whoami", bearer: token)
            }
            let first = try await deviceLogin(fake, wire, client: client)
            let (access1, refresh1) = (try #require(first["access_token"]), try #require(first["refresh_token"]))
            let second = try await refresh(refresh1)
            let (access2, refresh2) = (try #require(second["access_token"]), try #require(second["refresh_token"]))
            #expect(second.status == 200 && access2 != access1 && refresh2 != refresh1 && second["scope"] == Self.scope)
            let old = try await whoami(access1)
            #expect(old.status == 401 && old["errcode"] == "M_UNKNOWN_TOKEN" && old.bool("soft_logout") == false)
            #expect(fake.isRevoked(accessToken: access1) && !fake.isRevoked(accessToken: access2))
            #expect(try await whoami(access2).status == 200)

            let reuse = try await refresh(refresh1)
            #expect(reuse.status == 400 && reuse["error"] == "invalid_grant")
            #expect(fake.isRevoked(accessToken: access2) && fake.liveSessions == 0)
            #expect(try await whoami(access2).status == 401)
            #expect(try await refresh(refresh2)["error"] == "invalid_grant")

            #expect(try await refresh("mar_unknown")["error"] == "invalid_grant")
            let stranger = try await refresh(refresh2, client: "nobody")
            #expect(stranger.status == 401 && stranger["error"] == "invalid_client")
            let password = try await wire.form("/oauth2/token", ["grant_type": "password", "client_id": client])
            #expect(password.status == 400 && password["error"] == "unsupported_grant_type")
            #expect(fake.tokenRequests["refresh_token"] == 5)
        }
    }

    @Test func authorizationCodeNeedsTheRightVerifier() async throws {
        try await serving { fake, wire in
            let client = try await register(wire)
            /// `/oauth2/authorize` with the standard parameters, `changes` applied (nil removes one).
            func authorize(_ changes: [String: String?] = [:]) async throws -> OAuthWire.Reply {
                var query: [String: String?] = ["response_type": "code", "client_id": client, "scope": Self.scope, "state": "s t&ate",
                                                "redirect_uri": "http://127.0.0.1:54321/callback", "code_challenge": Self.challenge,
                                                "code_challenge_method": "S256"]
                query.merge(changes) { _, new in new }
                return try await wire.get("/oauth2/authorize?" + OAuthWire.encoded(query.compactMapValues { $0 }))
            }
            func redirect(_ reply: OAuthWire.Reply) throws -> URLComponents {
                #expect(reply.status == 302, "\(reply.text)")
                return try #require(URLComponents(string: reply.header("location") ?? ""))
            }
            func code(_ reply: OAuthWire.Reply) throws -> String {
                let location = try redirect(reply)
                #expect(location.port == 54321 && location.path == "/callback")
                #expect(location.queryItems?.first { $0.name == "state" }?.value == "s t&ate")
                return try #require(location.queryItems?.first { $0.name == "code" }?.value)
            }
            func exchange(_ code: String, verifier: String = Self.verifier, redirect: String = "http://127.0.0.1:54321/callback")
                async throws -> OAuthWire.Reply {
                try await wire.form("/oauth2/token", ["grant_type": "authorization_code", "code": code, "redirect_uri": redirect,
                                                     "client_id": client, "code_verifier": verifier])
            }

            let wrong = try await exchange(try code(try await authorize()), verifier: String(repeating: "a", count: 43))
            #expect(wrong.status == 400 && wrong["error"] == "invalid_grant")
            let elsewhere = try await exchange(try code(try await authorize()), redirect: "http://127.0.0.1:1/callback")
            #expect(elsewhere["error"] == "invalid_grant")
            let good = try code(try await authorize())
            let tokens = try await exchange(good)
            #expect(tokens.status == 200 && tokens["scope"] == Self.scope && tokens.header("cache-control") == "no-store")
            #expect(try await exchange(good)["error"] == "invalid_grant")

            let fragment = try redirect(try await authorize(["response_mode": "fragment"]))
            #expect(fragment.fragment?.hasPrefix("code=") == true && fragment.query == nil)
            for (changes, error) in [(["code_challenge_method": "plain"], "invalid_request"), (["code_challenge": nil], "invalid_request"),
                                     (["scope": "openid"], "invalid_scope"), (["response_type": "token"], "unsupported_response_type")] {
                let location = try redirect(try await authorize(changes))
                #expect(location.queryItems?.first { $0.name == "error" }?.value == error, "\(changes)")
            }
            let unregistered = try await authorize(["redirect_uri": "http://127.0.0.1:54321/elsewhere"])
            #expect(unregistered.status == 400 && unregistered.header("location") == nil)
            #expect(try await authorize(["client_id": "nobody"]).status == 400)
            #expect(fake.tokenRequests["authorization_code"] == 4)
        }
    }

    @Test func revocationEndsTheSessionAndWhoamiNamesTheDevice() async throws {
        try await serving { fake, wire in
            let client = try await register(wire)
            let first = try await deviceLogin(fake, wire, client: client)
            let access = try #require(first["access_token"])
            let whoami = try await wire.get("/_matrix/client/v3/account/whoami", bearer: access)
            #expect(whoami.status == 200 && whoami["user_id"] == "@relay:localhost" && whoami["device_id"] == Self.device)

            time.advance(by: .seconds(301))
            let expired = try await wire.get("/_matrix/client/v3/account/whoami", bearer: access)
            #expect(expired.status == 401 && expired["errcode"] == "M_UNKNOWN_TOKEN" && expired.bool("soft_logout") == true)
            #expect(!fake.isRevoked(accessToken: access))

            let unknown = try await wire.form("/oauth2/revoke", ["token": "mat_unknown", "client_id": client])
            #expect(unknown.status == 200)
            let second = try await deviceLogin(fake, wire, client: client)
            #expect(fake.liveSessions == 2)
            let revoked = try await wire.form("/oauth2/revoke", ["token": try #require(second["refresh_token"]),
                                                                 "token_type_hint": "refresh_token", "client_id": client])
            #expect(revoked.status == 200 && fake.liveSessions == 1)
            let access2 = try #require(second["access_token"])
            #expect(fake.isRevoked(accessToken: access2))
            let dead = try await wire.get("/_matrix/client/v3/account/whoami", bearer: access2)
            #expect(dead.status == 401 && dead.bool("soft_logout") == false)
            let refresh = try await wire.form("/oauth2/token", ["grant_type": "refresh_token", "client_id": client,
                                                                "refresh_token": second["refresh_token"] ?? ""])
            #expect(refresh["error"] == "invalid_grant")

            let other = try await register(wire)
            let foreign = try await wire.form("/oauth2/revoke", ["token": access, "client_id": other])
            #expect(foreign.status == 400 && fake.liveSessions == 1)
            let stranger = try await wire.form("/oauth2/revoke", ["token": access, "client_id": "nobody"])
            #expect(stranger.status == 401 && stranger["error"] == "invalid_client" && fake.liveSessions == 1)
            let byAccessToken = try await wire.form("/oauth2/revoke", ["token": access, "client_id": client])
            #expect(byAccessToken.status == 200 && fake.liveSessions == 0 && fake.isRevoked(accessToken: access))
            let revived = try await wire.form("/oauth2/token", ["grant_type": "refresh_token", "client_id": client,
                                                                "refresh_token": first["refresh_token"] ?? ""])
            #expect(revived["error"] == "invalid_grant")
            #expect(try await wire.get("/_matrix/client/v3/account/whoami").status == 401)
        }
    }
}

/// Raw HTTP to the double through `URLSession` (its own sockets, nothing shared with the code under test); redirects
/// are returned, not followed.
struct OAuthWire: Sendable {
    var base: String

    /// An answer: status, headers by lower-case name, and the JSON object of the body (empty when it is not one).
    struct Reply: Sendable {
        var status: Int
        var headers: [String: String]
        var body: Data

        var object: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var text: String { String(decoding: body, as: UTF8.self) }
        subscript(_ key: String) -> String? { object[key] as? String }
        func int(_ key: String) -> Int? { object[key] as? Int }
        func bool(_ key: String) -> Bool? { object[key] as? Bool }
        func strings(_ key: String) -> [String]? { object[key] as? [String] }
        func header(_ name: String) -> String? { headers[name] }
    }

    /// Keeps the 3xx answer instead of following it.
    final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
            completionHandler(nil)
        }
    }

    static let session = URLSession(configuration: .ephemeral, delegate: NoRedirects(), delegateQueue: nil)

    func get(_ pathAndQuery: String, bearer: String? = nil) async throws -> Reply {
        var request = URLRequest(url: URL(string: base + pathAndQuery)!)
        if let bearer { request.setValue("Bearer " + bearer, forHTTPHeaderField: "Authorization") }
        return try await send(request)
    }

    /// `POST` of `fields` as `application/x-www-form-urlencoded`.
    func form(_ path: String, _ fields: [String: String]) async throws -> Reply {
        try await post(path, Self.encoded(fields), type: "application/x-www-form-urlencoded")
    }

    /// `POST` of a JSON text.
    func json(_ path: String, _ text: String) async throws -> Reply {
        try await post(path, text, type: "application/json")
    }

    private func post(_ path: String, _ body: String, type: String) async throws -> Reply {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = "POST"
        request.setValue(type, forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.utf8)
        return try await send(request)
    }

    private func send(_ request: URLRequest) async throws -> Reply {
        let (data, response) = try await Self.session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields { headers[String(describing: name).lowercased()] = String(describing: value) }
        return Reply(status: http.statusCode, headers: headers, body: data)
    }

    /// `fields` as a form or query, every character but RFC 3986's unreserved ones percent-encoded.
    static func encoded(_ fields: [String: String]) -> String {
        var unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        unreserved.insert(charactersIn: "-._~")
        return fields.sorted { $0.key < $1.key }.map { name, value in
            name + "=" + value.addingPercentEncoding(withAllowedCharacters: unreserved)!
        }.joined(separator: "&")
    }
}
