import FoundationEssentials
import IsthmusCommon

/// The avatars both ways (RICH.md §8), so each image crosses once however many rooms and restarts see it:
/// `xmpp_avatars` maps an XMPP avatar's SHA-1 to the `mxc://` it was uploaded as; `matrix_avatars` keeps the image
/// a Matrix avatar (`mxc://`) became for XMPP vCards (small: size-limited), with its SHA-1 and media type.
enum AvatarTable {
    static let schema = """
        CREATE TABLE xmpp_avatars (
            sha1  TEXT PRIMARY KEY,
            mxc   TEXT NOT NULL
        );
        CREATE TABLE matrix_avatars (
            mxc         TEXT PRIMARY KEY,
            sha1        TEXT NOT NULL,
            media_type  TEXT NOT NULL,
            data        BLOB NOT NULL
        );
        """
    /// Migration 11 on PostgreSQL.
    static let postgresSchema = """
        CREATE TABLE xmpp_avatars (
            sha1  TEXT PRIMARY KEY,
            mxc   TEXT NOT NULL
        );
        CREATE TABLE matrix_avatars (
            mxc         TEXT PRIMARY KEY,
            sha1        TEXT NOT NULL,
            media_type  TEXT NOT NULL,
            data        BYTEA NOT NULL
        );
        """
}

/// An avatar image as XMPP vCards carry it: its bytes, media type and SHA-1 (lower-case hex, XEP-0153 §4).
public struct StoredAvatar: Sendable, Equatable {
    public var sha1: String
    public var mediaType: String
    public var data: [UInt8]

    public init(sha1: String, mediaType: String, data: [UInt8]) {
        self.sha1 = sha1
        self.mediaType = mediaType
        self.data = data
    }
}

extension Store {
    /// The `mxc://` an XMPP avatar with this SHA-1 was uploaded as, if it was. Does I/O on the store's thread.
    public func xmppAvatarMXC(sha1: String) throws -> MXCURI? {
        try read { db in
            try db.query("SELECT mxc FROM xmpp_avatars WHERE sha1 = ?", sha1) { $0.string(0).flatMap(MXCURI.init(mxc:)) }.first ?? nil
        }
    }

    /// Records that the XMPP avatar `sha1` is uploaded as `mxc` (a later upload of the same image replaces it).
    public func recordXMPPAvatar(sha1: String, mxc: MXCURI) throws {
        try write { db in
            _ = try db.run("INSERT INTO xmpp_avatars (sha1, mxc) VALUES (?, ?) ON CONFLICT (sha1) DO UPDATE SET mxc = excluded.mxc", sha1, mxc)
        }
    }

    /// The image the Matrix avatar `mxc` became, if it was fetched before.
    public func matrixAvatar(mxc: MXCURI) throws -> StoredAvatar? {
        try read { db in
            try db.query("SELECT sha1, media_type, data FROM matrix_avatars WHERE mxc = ?", mxc) { row -> StoredAvatar? in
                guard let sha1 = row.string(0), let type = row.string(1) else { return nil }
                return StoredAvatar(sha1: sha1, mediaType: type, data: row.blob(2))
            }.first ?? nil
        }
    }

    /// Keeps the image the Matrix avatar `mxc` became.
    public func recordMatrixAvatar(mxc: MXCURI, _ avatar: StoredAvatar) throws {
        try write { db in
            _ = try db.run("""
                INSERT INTO matrix_avatars (mxc, sha1, media_type, data) VALUES (?, ?, ?, ?)
                ON CONFLICT (mxc) DO UPDATE SET sha1 = excluded.sha1, media_type = excluded.media_type, data = excluded.data
                """,
                           mxc, avatar.sha1, avatar.mediaType, SQLValue.blob(avatar.data))
        }
    }
}
