import Bridge
import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import Matrix
import MatrixAccount
import MatrixClient

/// The Matrix half of `isthmus doctor` in client mode: the homeserver answers, the logins it offers (and whether it moved
/// to OAuth 2.0), the stored session — kept, and accepted by the homeserver — and the account in every linked room
/// (it cannot join a room it is not invited to, so a link whose room it left is dead). The session's access token is only
/// shown to the homeserver, never refreshed: a refresh here would rotate the pair under a running `serve`. Nothing is
/// created or migrated in the store. Does network I/O; never throws.
enum MatrixAccountDoctor {
    static func check(config: Config, account: Config.MatrixAccount, logger: Logger, timeout: Duration) async -> [DoctorFinding] {
        let plain = MatrixDoctor.client(config, token: "", logger: logger, timeout: timeout)
        let reachable = await MatrixDoctor.homeserverFinding(plain, config: config)
        guard reachable.ok else { return [reachable] }
        return [reachable, await loginFinding(plain, config: config, account: account)]
            + (await sessionFindings(config: config, account: account, logger: logger, timeout: timeout))
    }

    /// Which logins the homeserver offers, against what the config can do.
    static func loginFinding(_ client: MatrixClient, config: Config, account: Config.MatrixAccount) async -> DoctorFinding {
        let flows: LoginFlows
        do {
            flows = try await client.loginFlows()
        } catch where error.status == 404 {
            flows = LoginFlows(flows: [])
        } catch {
            return DoctorFinding(ok: false, check: "matrix.login", detail: "GET /login failed: \(error.message)")
        }
        let oauth = (try? await client.authMetadata()) ?? nil
        let offered = [LoginType.password, LoginType.sso].filter(flows.offers)
        var detail = "the homeserver offers \(offered.isEmpty ? "no login Isthmus can use" : offered.joined(separator: " and "))"
        if let oauth {
            let grant = oauth.offersDeviceGrant ? "the device authorization grant" : oauth.offersAuthorizationCode ? "a browser on this machine" : nil
            detail += "; it uses OAuth 2.0 (next-generation auth)" + (grant.map { ": isthmus login --oauth signs in through \($0)" }
                ?? ", but offers no grant Isthmus can use")
        }
        if flows.offers(LoginType.password) {
            return DoctorFinding(ok: true, check: "matrix.login", detail: detail + (account.password == nil
                ? " (no password is configured: a session ended for good needs isthmus login)" : ""), warning: oauth != nil)
        }
        return DoctorFinding(ok: true, check: "matrix.login", detail: detail + (account.password == nil ? ""
            : "; matrix.client.password cannot be used: log in with isthmus login --sso"), warning: true)
    }

    /// The stored session: whether there is one, and whether the homeserver accepts it; then, with a session that works,
    /// whether the account is in the linked rooms.
    static func sessionFindings(config: Config, account: Config.MatrixAccount, logger: Logger, timeout: Duration) async -> [DoctorFinding] {
        let none = account.password == nil
            ? DoctorFinding(ok: false, check: "matrix.session", detail: SessionStall.noSession.description)
            : DoctorFinding(ok: true, check: "matrix.session", detail: "no session is stored yet: serve logs in with the configured password")
        let stored: (session: MatrixSession, links: [RoomLink])
        do {
            guard let kept = try await storedState(config: config, user: account.userID) else { return [none] }
            stored = kept
        } catch {
            return [DoctorFinding(ok: false, check: "matrix.session", detail: "cannot read the stored session: \(error)")]
        }
        let session = stored.session
        let client = MatrixDoctor.client(config, token: session.accessToken.secret, logger: logger, timeout: timeout)
        do {
            let owner = try await client.tokenOwner()
            guard owner.userID == account.userID else {
                return [DoctorFinding(ok: false, check: "matrix.session", detail: "the stored session belongs to \(owner.userID), not \(account.userID)")]
            }
            let expiry = session.expiresAt.map { " (its access token expires in \(max(0, $0 - CommandContext.nowMilliseconds()) / 1000) s; serve refreshes it)" } ?? ""
            let accepted = DoctorFinding(ok: true, check: "matrix.session",
                                         detail: "the homeserver accepts the stored session of \(account.userID) on device \(session.deviceID)\(expiry)")
            do {
                return [accepted, roomsFinding(joined: Set(try await client.joinedRooms()), links: stored.links, account: account.userID)]
            } catch {
                return [accepted, DoctorFinding(ok: false, check: "matrix.rooms", detail: "GET /joined_rooms failed: \(error.message)")]
            }
        } catch where error.errcode == .unknownToken && error.softLogout && session.refreshToken != nil {
            return [DoctorFinding(ok: true, check: "matrix.session", detail: "the stored access token of device \(session.deviceID) has expired: "
                                  + "serve refreshes it with the stored refresh token", warning: true)]
        } catch where error.errcode == .unknownToken {
            return [account.password == nil
                ? DoctorFinding(ok: false, check: "matrix.session", detail: "the homeserver no longer accepts the stored session: run isthmus login")
                : DoctorFinding(ok: true, check: "matrix.session", detail: "the homeserver no longer accepts the stored session: "
                                + "serve logs in again with the configured password", warning: true)]
        } catch {
            return [DoctorFinding(ok: false, check: "matrix.session", detail: "whoami with the stored session failed: \(error.message)")]
        }
    }

    /// Whether the account is in every room of a link (being unlinked aside). Pure.
    static func roomsFinding(joined: Set<RoomID>, links: [RoomLink], account: UserID) -> DoctorFinding {
        let live = links.filter { !$0.unlinking }
        let missing = live.filter { !joined.contains($0.matrixRoom) }
        guard missing.isEmpty else {
            let rooms = missing.map { "\($0.matrixAlias.map(\.description) ?? $0.matrixRoom.description) (linked with \($0.muc))" }
            return DoctorFinding(ok: false, check: "matrix.rooms", detail: "\(account) is not in \(rooms.joined(separator: ", ")): "
                                 + "nothing crosses there until someone invites it again (serve joins a linked room it is invited to)")
        }
        return DoctorFinding(ok: true, check: "matrix.rooms", detail: live.isEmpty ? "no rooms are linked yet"
                             : "\(account) is in all \(live.count) linked room\(live.count == 1 ? "" : "s")")
    }

    /// The session the store keeps and the links, read without creating or migrating anything (nil before `login` or
    /// `serve` made a session).
    static func storedState(config: Config, user: UserID) async throws -> (session: MatrixSession, links: [RoomLink])? {
        if let path = config.database.path, !FileManager.default.fileExists(atPath: path) { return nil }
        let diagnosis = try Store.diagnose(config.database.location)
        guard diagnosis.pending.isEmpty, diagnosis.unknown.isEmpty else { return nil }
        let store = try Store(location: config.database.location, logger: .disabled)
        do {
            let session = try await StoreSessionVault(store: store).session(of: user)
            let links = session == nil ? [] : try await store.roomLinks()
            await store.close()
            return session.map { ($0, links) }
        } catch {
            await store.close()
            throw error
        }
    }
}
