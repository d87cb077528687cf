import IsthmusCommon

/// Event type names Isthmus understands (Matrix client-server API, "Events" and "Modules"). Constants only.
public enum MatrixEventType {
    /// `m.room.message` — instant messages (spec §11.2.1).
    public static let message = "m.room.message"
    /// `m.room.member` — membership and per-room profile (spec §10.2 "m.room.member").
    public static let member = "m.room.member"
    /// `m.room.redaction` (spec §11.8).
    public static let redaction = "m.room.redaction"
    /// `m.reaction` — an `m.annotation` relation (spec §11.36 "Event annotations and reactions").
    public static let reaction = "m.reaction"
    /// `m.sticker` — an image sent as a sticker (spec §11.14).
    public static let sticker = "m.sticker"
    /// `m.room_key` — a room's Megolm key, sent over Olm to a device (spec §11.12.5 "m.room_key").
    public static let roomKey = "m.room_key"
    /// `m.forwarded_room_key` — a room key sent in answer to a key request (spec §11.12.5.1).
    public static let forwardedRoomKey = "m.forwarded_room_key"
    /// `m.room.name`.
    public static let roomName = "m.room.name"
    /// `m.room.topic`.
    public static let roomTopic = "m.room.topic"
    /// `m.room.avatar`.
    public static let roomAvatar = "m.room.avatar"
    /// `m.room.power_levels`.
    public static let powerLevels = "m.room.power_levels"
    /// `m.room.tombstone` — the room was upgraded (spec §11.32 "Room upgrades").
    public static let tombstone = "m.room.tombstone"
    /// `m.room.create` (its sender is the room's creator from room version 11 on).
    public static let create = "m.room.create"
    /// `m.room.canonical_alias`.
    public static let canonicalAlias = "m.room.canonical_alias"
    /// `m.bridge` — which bridge links the room to what (MSC2346).
    public static let bridge = "m.bridge"
    /// `uk.half-shot.bridge` — MSC2346's unstable name, still read by Element.
    public static let bridgeUnstable = "uk.half-shot.bridge"
    /// `m.room.encrypted` — an end-to-end encrypted event (spec §11.12 "End-to-End Encryption"); the bridge cannot read it.
    public static let encrypted = "m.room.encrypted"
    /// `m.room.encryption` — the room encrypts its events from now on (state; it cannot be turned off again).
    public static let encryption = "m.room.encryption"
    /// `m.room.history_visibility` — who may read the room's history (spec §11.13).
    public static let historyVisibility = "m.room.history_visibility"
    /// `m.typing` — ephemeral (spec §11.5).
    public static let typing = "m.typing"
    /// `m.receipt` — ephemeral (spec §11.6).
    public static let receipt = "m.receipt"
}

/// Relation types of `m.relates_to.rel_type` (spec §11.10 "Forming relationships between events").
public enum MatrixRelationType {
    /// An edit (spec §11.37 "Event replacements").
    public static let replace = "m.replace"
    /// A reaction or other annotation.
    public static let annotation = "m.annotation"
    /// A thread.
    public static let thread = "m.thread"
    /// A generic reference.
    public static let reference = "m.reference"
}
