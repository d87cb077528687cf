import IsthmusCommon

/// Maps a method and raw path to an ``AppServiceRoute`` (appservice API v1.17 §2.3; the legacy unprefixed paths of
/// §2.3.1 "Legacy routes" too). Pure.
///
/// Unknown path → 404 `M_UNRECOGNIZED`; known path with another method → 405 `M_UNRECOGNIZED`;
/// a path parameter that is not a valid id → 400 `M_INVALID_PARAM`.
public enum AppServiceRouter {
    private static let prefix = ["_matrix", "app", "v1"]
    private static let provisioningPrefix = ["_isthmus", "provision", "v1"]

    public static func route(method: String, path: String) -> Result<AppServiceRoute, AppServiceRejection> {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard segments.first == "" else { return .failure(.unknownPath) }
        segments.removeFirst()
        if segments.starts(with: provisioningPrefix) {
            switch ProvisioningRoute.route(Array(segments.dropFirst(provisioningPrefix.count)), method: method) {
            case .success(let route): return .success(.provisioning(route))
            case .failure(let rejection): return .failure(rejection)
            case nil: return .failure(.unknownPath)
            }
        }
        if segments.starts(with: prefix) {
            segments.removeFirst(prefix.count)
            if segments == ["ping"] { return expect("POST", method, .ping) }
            if segments.first == "thirdparty" { return thirdParty(Array(segments.dropFirst()), method: method) }
        }
        switch segments.count {
        case 4 where segments[0] == "media":
            return expect(["GET", "HEAD"], method, .media(id: segments[1], signature: segments[2], fileName: segments[3]))
        case 1 where segments == ["health"]:
            return expect(["GET", "HEAD"], method, .health)
        case 2 where segments == ["_isthmus", "health"]:
            return expect(["GET", "HEAD"], method, .health)
        case 2:
            return resource(segments[0], rawParameter: segments[1], method: method)
        default:
            return .failure(.unknownPath)
        }
    }

    private static func resource(_ kind: String, rawParameter: String, method: String) -> Result<AppServiceRoute, AppServiceRejection> {
        let expected: String
        switch kind {
        case "transactions": expected = "PUT"
        case "users", "rooms": expected = "GET"
        default: return .failure(.unknownPath)
        }
        guard method == expected else { return .failure(.wrongMethod) }
        guard let parameter = PercentEncoding.decode(rawParameter) else {
            return .failure(.invalidParameter("Malformed percent-encoding in the path"))
        }
        switch kind {
        case "transactions":
            guard let id = TransactionID(parameter) else { return .failure(.invalidParameter("Invalid transaction id")) }
            return .success(.transaction(id))
        case "users":
            guard let user = UserID(parameter) else { return .failure(.invalidParameter("Invalid user id")) }
            return .success(.userQuery(user))
        default:
            guard let alias = RoomAlias(parameter) else { return .failure(.invalidParameter("Invalid room alias")) }
            return .success(.roomAliasQuery(alias))
        }
    }

    /// `thirdparty/protocol/{p}`, `thirdparty/location[/{p}]`, `thirdparty/user[/{p}]` (after the prefix).
    private static func thirdParty(_ segments: [String], method: String) -> Result<AppServiceRoute, AppServiceRejection> {
        let name = segments.count == 2 ? PercentEncoding.decode(segments[1]) : nil
        if segments.count == 2, name == nil { return .failure(.invalidParameter("Malformed percent-encoding in the path")) }
        switch (segments.first, segments.count) {
        case ("protocol", 2): return expect("GET", method, .thirdPartyProtocol(name!))
        case ("location", 1): return expect("GET", method, .thirdPartyLocation(protocol: nil))
        case ("location", 2): return expect("GET", method, .thirdPartyLocation(protocol: name))
        case ("user", 1), ("user", 2): return expect("GET", method, .thirdPartyUser)
        default: return .failure(.unknownPath)
        }
    }

    private static func expect(_ allowed: String, _ method: String, _ route: AppServiceRoute) -> Result<AppServiceRoute, AppServiceRejection> {
        expect([allowed], method, route)
    }

    private static func expect(_ allowed: [String], _ method: String, _ route: AppServiceRoute) -> Result<AppServiceRoute, AppServiceRejection> {
        allowed.contains(method) ? .success(route) : .failure(.wrongMethod)
    }
}
