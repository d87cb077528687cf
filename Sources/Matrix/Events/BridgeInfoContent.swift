import IsthmusCommon

/// Content of `m.bridge` and of its older name `uk.half-shot.bridge` (MSC2346, "Bridge information state event"):
/// which bridge links the room to which remote channel. Pure value. The state key is chosen by the bridge, unique
/// per bridge and remote channel; an empty content (``BridgeInfoContent/removed``) withdraws it.
public struct BridgeInfoContent: Sendable, Equatable, Encodable {
    /// An `id` and a human-readable `displayname` (MSC2346's `protocol`, `network` and `channel` objects).
    public struct Section: Sendable, Equatable, Encodable {
        public var id: String
        public var displayname: String?
        public init(id: String, displayname: String?) {
            self.id = id
            self.displayname = displayname
        }
    }

    /// The bridge's bot user.
    public var bridgebot: UserID
    /// Who asked for the link, when known.
    public var creator: UserID?
    public var `protocol`: Section
    public var network: Section?
    public var channel: Section

    public init(bridgebot: UserID, creator: UserID? = nil, protocol: Section, network: Section? = nil, channel: Section) {
        self.bridgebot = bridgebot
        self.creator = creator
        self.protocol = `protocol`
        self.network = network
        self.channel = channel
    }
}

/// A bridge-info state event as the bridge sets it: under both event types, with its state key; `content` nil
/// withdraws it (the state is set to `{}`).
public struct BridgeInfoState: Sendable, Equatable {
    /// The event types set, newest first (MSC2346's `m.bridge`; Element still reads `uk.half-shot.bridge`).
    public static let eventTypes = [MatrixEventType.bridge, MatrixEventType.bridgeUnstable]

    public var stateKey: String
    public var content: BridgeInfoContent?

    public init(stateKey: String, content: BridgeInfoContent?) {
        self.stateKey = stateKey
        self.content = content
    }
}
