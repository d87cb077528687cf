import IsthmusCommon
import Matrix

extension MatrixClient {
    /// Joins `room` as `user` (`POST /join/{roomIdOrAlias}`, client-server API §10.4.2). Returns the room id.
    public func join(_ room: RoomID, as user: UserID? = nil, reason: String? = nil) async throws(MatrixError) -> RoomID {
        try await join(target: room.rawValue, as: user, reason: reason)
    }

    /// Joins `room` as `user` through `servers` (`server_name` query parameters: homeservers that may know the room,
    /// needed when ours is not in it yet). Returns the room id.
    public func join(_ room: RoomID, via servers: [String], as user: UserID? = nil) async throws(MatrixError) -> RoomID {
        try await join(target: room.rawValue, as: user, reason: nil, via: servers)
    }

    /// Joins the room behind `alias` as `user`. Returns the room id.
    public func join(alias: RoomAlias, as user: UserID? = nil, reason: String? = nil) async throws(MatrixError) -> RoomID {
        try await join(target: alias.rawValue, as: user, reason: reason)
    }

    private func join(target: String, as user: UserID?, reason: String?, via servers: [String] = []) async throws(MatrixError) -> RoomID {
        let body = try json(Bodies.Reason(reason: reason), call: .join)
        return try await perform(ClientRequest(.join, "POST", ["_matrix/client/v3/join", .param("roomIdOrAlias", target)],
                                               query: acting(user) + servers.map { ("server_name", $0) }, body: body),
                                 as: Bodies.RoomIDResponse.self).roomID
    }

    /// Leaves `room` as `user` (`POST /rooms/{roomId}/leave`).
    public func leave(_ room: RoomID, as user: UserID? = nil, reason: String? = nil) async throws(MatrixError) {
        let body = try json(Bodies.Reason(reason: reason), call: .leave)
        let _: Bodies.Empty = try await perform(ClientRequest(
            .leave, "POST", ["_matrix/client/v3/rooms", .param("roomId", room), "leave"], query: acting(user), body: body))
    }

    /// Invites `target` to `room`, acting as `user`.
    public func invite(_ target: UserID, to room: RoomID, as user: UserID? = nil, reason: String? = nil) async throws(MatrixError) {
        try await membershipAction(.invite, target, room, user, reason)
    }

    /// Kicks `target` from `room`, acting as `user` (needs the kick power level).
    public func kick(_ target: UserID, from room: RoomID, as user: UserID? = nil, reason: String? = nil) async throws(MatrixError) {
        try await membershipAction(.kick, target, room, user, reason)
    }

    /// Bans `target` from `room`, acting as `user`.
    public func ban(_ target: UserID, from room: RoomID, as user: UserID? = nil, reason: String? = nil) async throws(MatrixError) {
        try await membershipAction(.ban, target, room, user, reason)
    }

    /// Lifts the ban of `target` in `room`, acting as `user`.
    public func unban(_ target: UserID, in room: RoomID, as user: UserID? = nil, reason: String? = nil) async throws(MatrixError) {
        try await membershipAction(.unban, target, room, user, reason)
    }

    /// The membership changes of another user (client-server API §10.4): the last segment of their path
    /// (`POST /rooms/{roomId}/invite`) and their name as a call.
    private enum TargetedMembership: String {
        case invite, kick, ban, unban

        var call: MatrixCall {
            switch self {
            case .invite: .invite
            case .kick: .kick
            case .ban: .ban
            case .unban: .unban
            }
        }
    }

    private func membershipAction(_ action: TargetedMembership, _ target: UserID, _ room: RoomID, _ user: UserID?, _ reason: String?) async throws(MatrixError) {
        let body = try json(Bodies.Target(userID: target, reason: reason), call: action.call)
        let _: Bodies.Empty = try await perform(ClientRequest(
            action.call, "POST", ["_matrix/client/v3/rooms", .param("roomId", room), .literal(action.rawValue)], query: acting(user), body: body))
    }

    /// The joined members of `room` with their room display names and avatars (`GET /rooms/{roomId}/joined_members`).
    /// `user` must be in the room.
    public func joinedMembers(of room: RoomID, as user: UserID? = nil) async throws(MatrixError) -> [UserID: RoomMemberProfile] {
        struct Response: Decodable { var joined: [String: RoomMemberProfile] }
        let response = try await perform(ClientRequest(
            .joinedMembers, "GET", ["_matrix/client/v3/rooms", .param("roomId", room), "joined_members"], query: acting(user)),
            as: Response.self)
        var members: [UserID: RoomMemberProfile] = [:]
        for (text, profile) in response.joined {
            if let member = UserID(text) { members[member] = profile }
        }
        return members
    }

    /// The users joined to `room` or invited into it, with which (`GET /rooms/{roomId}/members?not_membership=leave`,
    /// the members' state events, bans and knocks filtered out here). `user` must be in the room.
    public func joinedAndInvitedMembers(of room: RoomID, as user: UserID? = nil) async throws(MatrixError) -> [UserID: Membership] {
        struct Response: Decodable {
            struct Member: Decodable {
                var stateKey: String?
                var content: MemberContent?
                enum CodingKeys: String, CodingKey { case stateKey = "state_key", content }
            }
            var chunk: [Member]
        }
        var query = acting(user)
        query.append(("not_membership", Membership.leave.rawValue))
        let response = try await perform(ClientRequest(
            .members, "GET", ["_matrix/client/v3/rooms", .param("roomId", room), "members"], query: query), as: Response.self)
        var members: [UserID: Membership] = [:]
        for member in response.chunk {
            guard let membership = member.content?.membership, membership == .join || membership == .invite,
                  let id = member.stateKey.flatMap(UserID.init) else { continue }
            members[id] = membership
        }
        return members
    }

    /// The rooms `user` has joined (`GET /joined_rooms`).
    public func joinedRooms(as user: UserID? = nil) async throws(MatrixError) -> [RoomID] {
        struct Response: Decodable {
            var joinedRooms: [RoomID]
            enum CodingKeys: String, CodingKey { case joinedRooms = "joined_rooms" }
        }
        return try await perform(ClientRequest(.joinedRooms, "GET", ["_matrix/client/v3/joined_rooms"], query: acting(user)),
                                 as: Response.self).joinedRooms
    }

    /// Sets `user`'s display name in `room` only: the `m.room.member` state event with membership `join`, keeping its
    /// avatar (client-server API §10.2 "m.room.member"; profiles are per room). `user` must be joined. Returns the event id.
    public func setRoomDisplayName(_ name: String?, in room: RoomID, for user: UserID) async throws(MatrixError) -> EventID {
        try await updateRoomMember(room, user, call: .setRoomDisplayName) { $0.displayName = name }
    }

    /// Sets `user`'s avatar in `room` only, keeping its room display name. Returns the event id.
    public func setRoomAvatarURL(_ url: String?, in room: RoomID, for user: UserID) async throws(MatrixError) -> EventID {
        try await updateRoomMember(room, user, call: .setRoomAvatarURL) { $0.avatarURL = url }
    }

    private func updateRoomMember(_ room: RoomID, _ user: UserID, call: MatrixCall, _ change: (inout MemberContent) -> Void) async throws(MatrixError) -> EventID {
        var content = try await stateEvent(MemberContent.self, type: MatrixEventType.member, stateKey: user.rawValue, in: room, as: user)
            ?? MemberContent(membership: .join)
        content.membership = .join
        content.reason = nil
        change(&content)
        return try await sendState(content, type: MatrixEventType.member, stateKey: user.rawValue, to: room, as: user)
    }
}
