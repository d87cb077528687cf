import FoundationEssentials
import IsthmusCommon

/// What `GET /_matrix/client/v3/sync` answered, as far as a bridge account cares (client-server API §10.5 "Syncing"):
/// per joined room its new timeline events in order (and whether the timeline was `limited`: a gap before them),
/// the rooms it is invited to (and by whom), the rooms it left or was removed from, and the token to sync on from.
/// Pure value.
///
/// Timeline events come without `room_id` (`ClientEventWithoutRoomID`): each is read with its room's id put in.
/// An event that does not decode is left out and counted (``undecodable``): one bad event must not hide a room's
/// others, nor stop the sync.
public struct SyncResponse: Sendable, Equatable, Decodable {
    /// `next_batch`: where the next sync starts.
    public var nextBatch: String
    public var joined: [JoinedRoom]
    public var invited: [InvitedRoom]
    public var left: [LeftRoom]
    /// Timeline events that did not decode, across rooms.
    public var undecodable: Int

    /// A joined room's part of the sync.
    public struct JoinedRoom: Sendable, Equatable {
        public var room: RoomID
        /// New events, oldest first.
        public var events: [ClientEvent]
        /// `timeline.limited`: events between the previous sync and these were left out (fill from `prevBatch`).
        public var limited: Bool
        /// `timeline.prev_batch`: where to page back from to fill a gap.
        public var prevBatch: String?

        public init(room: RoomID, events: [ClientEvent], limited: Bool = false, prevBatch: String? = nil) {
            self.room = room
            self.events = events
            self.limited = limited
            self.prevBatch = prevBatch
        }
    }

    /// A room the account is invited to.
    public struct InvitedRoom: Sendable, Equatable {
        public var room: RoomID
        /// Who sent the invite, from the stripped `m.room.member` state about the account (when the server gave it).
        public var inviter: UserID?

        public init(room: RoomID, inviter: UserID?) {
            self.room = room
            self.inviter = inviter
        }
    }

    /// A room the account left, or was kicked or banned from.
    public struct LeftRoom: Sendable, Equatable {
        public var room: RoomID
        /// The account's own last `m.room.member` event there, when the sync shows it (who removed it, and why).
        public var membership: ClientEvent?

        public init(room: RoomID, membership: ClientEvent?) {
            self.room = room
            self.membership = membership
        }
    }

    public init(nextBatch: String, joined: [JoinedRoom] = [], invited: [InvitedRoom] = [], left: [LeftRoom] = [], undecodable: Int = 0) {
        self.nextBatch = nextBatch
        self.joined = joined
        self.invited = invited
        self.left = left
        self.undecodable = undecodable
    }

    enum CodingKeys: String, CodingKey {
        case nextBatch = "next_batch"
        case rooms
    }

    private struct Rooms: Decodable {
        var join: [String: RawJoined]?
        var invite: [String: RawInvited]?
        var leave: [String: RawLeft]?
    }

    private struct RawTimeline: Decodable {
        var events: [JSONValue]?
        var limited: Bool?
        var prevBatch: String?
        enum CodingKeys: String, CodingKey {
            case events, limited
            case prevBatch = "prev_batch"
        }
    }

    private struct RawJoined: Decodable { var timeline: RawTimeline? }
    private struct RawLeft: Decodable { var timeline: RawTimeline? }
    private struct RawInvited: Decodable {
        struct State: Decodable { var events: [JSONValue]? }
        var inviteState: State?
        enum CodingKeys: String, CodingKey { case inviteState = "invite_state" }
    }

    /// Needs `userInfo[SyncResponse.accountKey]` (the syncing account's ``UserID``) to tell its own membership apart;
    /// without it invites carry no inviter and left rooms no membership event.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        nextBatch = try container.decode(String.self, forKey: .nextBatch)
        let rooms = try container.decodeIfPresent(Rooms.self, forKey: .rooms)
        let account = decoder.userInfo[Self.accountKey] as? UserID
        var undecodable = 0
        joined = (rooms?.join ?? [:]).compactMap { key, raw in
            guard let room = RoomID(key) else { return nil }
            let (events, bad) = Self.events(raw.timeline?.events ?? [], in: room)
            undecodable += bad
            return JoinedRoom(room: room, events: events, limited: raw.timeline?.limited ?? false, prevBatch: raw.timeline?.prevBatch)
        }.sorted { $0.room.rawValue < $1.room.rawValue }
        invited = (rooms?.invite ?? [:]).compactMap { key, raw in
            guard let room = RoomID(key) else { return nil }
            // Stripped state has no event id: only the sender of the account's own invite is read.
            let inviter = (raw.inviteState?.events ?? []).lazy.compactMap { event -> UserID? in
                guard case .object(let fields) = event, fields["type"] == .string("m.room.member"),
                      let account, fields["state_key"] == .string(account.rawValue),
                      case .string(let sender)? = fields["sender"] else { return nil }
                return UserID(sender)
            }.first
            return InvitedRoom(room: room, inviter: inviter)
        }.sorted { $0.room.rawValue < $1.room.rawValue }
        left = (rooms?.leave ?? [:]).compactMap { key, raw in
            guard let room = RoomID(key) else { return nil }
            let (events, bad) = Self.events(raw.timeline?.events ?? [], in: room)
            undecodable += bad
            let own = events.last { $0.memberUserID != nil && $0.memberUserID == account }
            return LeftRoom(room: room, membership: own)
        }.sorted { $0.room.rawValue < $1.room.rawValue }
        self.undecodable = undecodable
    }

    /// The `userInfo` key under which the decoder is told whose sync it is.
    public static let accountKey = CodingUserInfoKey(rawValue: "isthmus.sync.account")!

    /// Timeline events of `room`, each read with its `room_id` put in; those that do not decode are counted.
    static func events(_ raw: [JSONValue], in room: RoomID) -> (events: [ClientEvent], undecodable: Int) {
        var events: [ClientEvent] = []
        var undecodable = 0
        for value in raw {
            guard case .object(var fields) = value else {
                undecodable += 1
                continue
            }
            fields["room_id"] = .string(room.rawValue)
            if let data = try? JSONEncoder().encode(JSONValue.object(fields)), let event = try? JSONDecoder().decode(ClientEvent.self, from: data) {
                events.append(event)
            } else {
                undecodable += 1
            }
        }
        return (events, undecodable)
    }
}
