import IsthmusCommon
import Matrix

/// `GET /login`'s answer: the login types the homeserver offers (client-server API §"Login"). Pure value.
public struct LoginFlows: Sendable, Equatable, Decodable {
    /// One offered login type.
    public struct Flow: Sendable, Equatable, Decodable {
        /// `m.login.password`, `m.login.sso`, `m.login.token`… (see ``LoginType``).
        public var type: String

        public init(type: String) { self.type = type }
    }

    public var flows: [Flow]

    public init(flows: [Flow]) { self.flows = flows }

    /// Whether `type` is among the flows.
    public func offers(_ type: String) -> Bool { flows.contains { $0.type == type } }
}

/// The login types Isthmus uses (client-server API §"Login types").
public enum LoginType {
    public static let password = "m.login.password"
    /// Single sign-on through the browser, which ends at the client's `redirectUrl` with a `loginToken`.
    public static let sso = "m.login.sso"
    /// A short-lived login token, as SSO hands out.
    public static let token = "m.login.token"
}

/// What `POST /login` proves (client-server API §"Login").
public enum LoginCredential: Sendable, Equatable {
    /// `m.login.password` with the `m.id.user` identifier (a localpart or a full user id).
    case password(user: String, password: String)
    /// `m.login.token`: a login token, e.g. the `loginToken` SSO redirected to the client with.
    case token(String)
}

/// A `POST /login` request. Pure value.
public struct LoginRequest: Sendable, Equatable {
    public var credential: LoginCredential
    /// The device to log in on: an existing one is kept (its older tokens become invalid); nil lets the homeserver
    /// make a new one.
    public var deviceID: DeviceID?
    /// The name a new device gets (shown in the account's device list).
    public var initialDeviceDisplayName: String?
    /// Asks for a refresh token (`refresh_token: true`); the access token then expires (`expires_in_ms`).
    public var refreshToken: Bool

    public init(_ credential: LoginCredential, deviceID: DeviceID? = nil, initialDeviceDisplayName: String? = nil,
                refreshToken: Bool = false) {
        self.credential = credential
        self.deviceID = deviceID
        self.initialDeviceDisplayName = initialDeviceDisplayName
        self.refreshToken = refreshToken
    }
}

/// A successful `POST /login`.
public struct LoginResponse: Sendable, Equatable, Decodable {
    public var userID: UserID
    public var accessToken: AccessToken
    public var deviceID: DeviceID?
    /// Present when asked for (and the homeserver gives them).
    public var refreshToken: RefreshToken?
    /// How long ``accessToken`` lasts; absent: it does not expire.
    public var expiresInMilliseconds: Int64?

    public init(userID: UserID, accessToken: AccessToken, deviceID: DeviceID?, refreshToken: RefreshToken? = nil,
                expiresInMilliseconds: Int64? = nil) {
        self.userID = userID
        self.accessToken = accessToken
        self.deviceID = deviceID
        self.refreshToken = refreshToken
        self.expiresInMilliseconds = expiresInMilliseconds
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case accessToken = "access_token"
        case deviceID = "device_id"
        case refreshToken = "refresh_token"
        case expiresInMilliseconds = "expires_in_ms"
    }
}

/// A successful `POST /refresh` (client-server API §"Refreshing access tokens").
public struct RefreshResponse: Sendable, Equatable, Decodable {
    public var accessToken: AccessToken
    /// The refresh token to use next time; absent: keep using the one just traded.
    public var refreshToken: RefreshToken?
    /// How long ``accessToken`` lasts; absent: it does not expire.
    public var expiresInMilliseconds: Int64?

    public init(accessToken: AccessToken, refreshToken: RefreshToken? = nil, expiresInMilliseconds: Int64? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresInMilliseconds = expiresInMilliseconds
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
        case expiresInMilliseconds = "expires_in_ms"
    }
}

/// Whom an access token belongs to (`GET /account/whoami`).
public struct TokenOwner: Sendable, Equatable, Decodable {
    public var userID: UserID
    /// Absent for an appservice's token.
    public var deviceID: DeviceID?

    public init(userID: UserID, deviceID: DeviceID?) {
        self.userID = userID
        self.deviceID = deviceID
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case deviceID = "device_id"
    }
}
