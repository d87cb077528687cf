import IsthmusCommon
import Matrix
import Testing

/// Routing and authorization of appservice requests, without sockets.
@Suite struct AppServiceRoutingTests {
    let gate = AppServiceGate(hsToken: "secret")

    func decide(_ method: String, _ path: String, authorization: String? = "Bearer secret", query: [AppServiceRequest.QueryItem] = [],
                tooLarge: Bool = false) -> AppServiceGate.Decision {
        gate.decide(AppServiceRequest(method: method, path: path, query: query, authorization: authorization, bodyTooLarge: tooLarge))
    }

    @Test func routesV1AndLegacyPaths() {
        #expect(decide("PUT", "/_matrix/app/v1/transactions/42") == .serve(.transaction(TransactionID("42")!)))
        #expect(decide("PUT", "/transactions/42") == .serve(.transaction(TransactionID("42")!)))
        #expect(decide("GET", "/_matrix/app/v1/users/%40_xmpp_a%3Alocalhost") == .serve(.userQuery(UserID("@_xmpp_a:localhost")!)))
        #expect(decide("GET", "/users/@_xmpp_a:localhost") == .serve(.userQuery(UserID("@_xmpp_a:localhost")!)))
        #expect(decide("GET", "/_matrix/app/v1/rooms/%23_xmpp_r%3Alocalhost") == .serve(.roomAliasQuery(RoomAlias("#_xmpp_r:localhost")!)))
        #expect(decide("GET", "/rooms/%23_xmpp_r%3Alocalhost") == .serve(.roomAliasQuery(RoomAlias("#_xmpp_r:localhost")!)))
        #expect(decide("POST", "/_matrix/app/v1/ping") == .serve(.ping))
    }

    @Test func routesTheThirdPartyLookups() {
        #expect(decide("GET", "/_matrix/app/v1/thirdparty/protocol/xmpp") == .serve(.thirdPartyProtocol("xmpp")))
        #expect(decide("GET", "/_matrix/app/v1/thirdparty/location/xmpp", query: [.init(name: "muc", value: "a%40b")])
                == .serve(.thirdPartyLocation(protocol: "xmpp")))
        #expect(decide("GET", "/_matrix/app/v1/thirdparty/location") == .serve(.thirdPartyLocation(protocol: nil)))
        #expect(decide("GET", "/_matrix/app/v1/thirdparty/user/xmpp") == .serve(.thirdPartyUser))
        #expect(decide("GET", "/_matrix/app/v1/thirdparty/protocol/xmpp", authorization: nil)
                == .reject(AppServiceRejection(status: 401, errcode: "M_UNAUTHORIZED", message: "Missing access token")))
        if case .reject(let rejection) = decide("POST", "/_matrix/app/v1/thirdparty/protocol/xmpp") { #expect(rejection.status == 405) } else {
            Issue.record("a POST is not a lookup")
        }
        if case .reject(let rejection) = decide("GET", "/_matrix/app/v1/thirdparty/other") { #expect(rejection.status == 404) } else {
            Issue.record("an unknown lookup")
        }
    }

    @Test func anEncodedSlashStaysInsideTheTransactionID() {
        #expect(decide("PUT", "/_matrix/app/v1/transactions/a%2Fb%3Ac") == .serve(.transaction(TransactionID("a/b:c")!)))
        #expect(decide("PUT", "/_matrix/app/v1/transactions/a/b") == .reject(AppServiceRejection(status: 404, errcode: "M_UNRECOGNIZED", message: "Unrecognized request")))
    }

    @Test func healthNeedsNoToken() {
        #expect(decide("GET", "/health", authorization: nil) == .serve(.health))
        #expect(decide("GET", "/_isthmus/health", authorization: nil) == .serve(.health))
        #expect(decide("HEAD", "/health", authorization: "Bearer wrong") == .serve(.health))
    }

    @Test(arguments: ["/", "/_matrix/app/v1/transactions", "/_matrix/app/v2/transactions/1", "/_matrix/app/v1/ping/x",
                      "/ping", "/_matrix/app/v1/thirdparty/protocol", "relative", "/transactions/1/extra", ""])
    func unknownPathsAre404Unrecognized(path: String) {
        guard case .reject(let rejection) = decide("GET", path) else { Issue.record("served \(path)"); return }
        #expect(rejection.status == 404)
        #expect(rejection.errcode == "M_UNRECOGNIZED")
    }

    @Test func wrongMethodsAre405Unrecognized() {
        for (method, path) in [("GET", "/_matrix/app/v1/transactions/1"), ("POST", "/_matrix/app/v1/users/@a:b"),
                               ("PUT", "/rooms/%23a:b"), ("GET", "/_matrix/app/v1/ping"), ("POST", "/health")] {
            guard case .reject(let rejection) = decide(method, path) else { Issue.record("served \(method) \(path)"); continue }
            #expect(rejection.status == 405 && rejection.errcode == "M_UNRECOGNIZED", "\(method) \(path)")
        }
    }

    @Test func invalidParametersAre400() {
        for path in ["/_matrix/app/v1/users/notauser", "/_matrix/app/v1/rooms/!notanalias", "/_matrix/app/v1/transactions/%ZZ",
                     "/_matrix/app/v1/transactions/a%20b", "/_matrix/app/v1/users/%FF%FE"] {
            let method = path.contains("transactions") ? "PUT" : "GET"
            guard case .reject(let rejection) = decide(method, path) else { Issue.record("served \(path)"); continue }
            #expect(rejection.status == 400 && rejection.errcode == "M_INVALID_PARAM", "\(path)")
        }
    }

    @Test func missingTokenIs401AndWrongTokenIs403() {
        let path = "/_matrix/app/v1/transactions/1"
        #expect(decide("PUT", path, authorization: nil) == .reject(AppServiceRejection(status: 401, errcode: "M_UNAUTHORIZED", message: "Missing access token")))
        for header in ["Bearer wrong", "Bearer secre", "Bearer secrets", "Bearer SECRET"] {
            guard case .reject(let rejection) = decide("PUT", path, authorization: header) else { Issue.record("served \(header)"); continue }
            #expect(rejection.status == 403 && rejection.errcode == "M_FORBIDDEN")
        }
        for header in ["Basic c2VjcmV0", "Bearer", "Bearer   ", "secret", ""] {
            guard case .reject(let rejection) = decide("PUT", path, authorization: header) else { Issue.record("served \(header)"); continue }
            #expect(rejection.status == 401, "\(header)")
        }
        #expect(decide("PUT", path, authorization: "bearer secret") == .serve(.transaction(TransactionID("1")!)))
        #expect(decide("PUT", path, authorization: "Bearer  secret ") == .serve(.transaction(TransactionID("1")!)))
    }

    @Test func legacyQueryTokenIsAccepted() {
        let path = "/_matrix/app/v1/transactions/1"
        #expect(decide("PUT", path, authorization: nil, query: [.init(name: "access_token", value: "secret")]) == .serve(.transaction(TransactionID("1")!)))
        #expect(decide("PUT", path, authorization: nil, query: [.init(name: "access_token", value: "sec%72et")]) == .serve(.transaction(TransactionID("1")!)))
        guard case .reject(let rejection) = decide("PUT", path, authorization: nil, query: [.init(name: "access_token", value: "nope")]) else {
            Issue.record("served"); return
        }
        #expect(rejection.status == 403)
        guard case .reject(let empty) = decide("PUT", path, authorization: nil, query: [.init(name: "access_token", value: nil)]) else {
            Issue.record("served"); return
        }
        #expect(empty.status == 401)
    }

    @Test func decisionOrderIsRouteThenAuthThenSize() {
        guard case .reject(let unknown) = decide("PUT", "/nope", authorization: nil, tooLarge: true) else { Issue.record(); return }
        #expect(unknown.status == 404)
        guard case .reject(let unauthorized) = decide("PUT", "/transactions/1", authorization: nil, tooLarge: true) else { Issue.record(); return }
        #expect(unauthorized.status == 401)
        guard case .reject(let large) = decide("PUT", "/transactions/1", tooLarge: true) else { Issue.record(); return }
        #expect(large.status == 413 && large.errcode == "M_TOO_LARGE")
    }
}
