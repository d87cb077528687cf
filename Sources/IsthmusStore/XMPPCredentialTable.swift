import IsthmusCommon

/// `xmpp_credentials`: what client mode's logins keep for the next, one row per account (its bare JID, so a changed
/// `xmpp.client.jid` never uses another account's): the SASL2 user-agent id (a UUID made once, so Bind2 gives the
/// same resource and FAST tokens stay this client's), SCRAM's salted password with the salt, iteration count and hash
/// it was made for, and the XEP-0484 FAST token. The salted password and the token are secrets like the configured
/// password: the store is as private as the config.
enum XMPPCredentialTable {
    /// Migration 16 on SQLite.
    static let schema = """
        CREATE TABLE xmpp_credentials (
            account           TEXT PRIMARY KEY,
            user_agent_id     TEXT NOT NULL,
            scram_hash        TEXT,
            scram_salt        BLOB,
            scram_iterations  BIGINT,
            salted_password   BLOB,
            fast_mechanism    TEXT,
            fast_token        TEXT,
            fast_expiry       TEXT,
            fast_count        BIGINT
        );
        """
    /// Migration 16 on PostgreSQL.
    static let postgresSchema = """
        CREATE TABLE xmpp_credentials (
            account           TEXT PRIMARY KEY,
            user_agent_id     TEXT NOT NULL,
            scram_hash        TEXT,
            scram_salt        BYTEA,
            scram_iterations  BIGINT,
            salted_password   BYTEA,
            fast_mechanism    TEXT,
            fast_token        TEXT,
            fast_expiry       TEXT,
            fast_count        BIGINT
        );
        """
}

/// What the store keeps of client mode's logins for one account.
public struct StoredXMPPCredentials: Sendable, Equatable {
    /// SCRAM's SaltedPassword and what it was made for.
    public struct SaltedPassword: Sendable, Equatable {
        /// The SCRAM hash's name: `SHA-1` or `SHA-256`.
        public var hash: String
        public var salt: [UInt8]
        public var iterations: Int
        public var bytes: [UInt8]

        public init(hash: String, salt: [UInt8], iterations: Int, bytes: [UInt8]) {
            self.hash = hash
            self.salt = salt
            self.iterations = iterations
            self.bytes = bytes
        }
    }

    /// A XEP-0484 FAST token.
    public struct FASTToken: Sendable, Equatable {
        /// The HT mechanism it was issued for (`HT-SHA-256-ENDP`).
        public var mechanism: String
        public var secret: String
        /// As the server wrote it (XEP-0082).
        public var expiry: String?
        /// Logins that used it.
        public var count: Int

        public init(mechanism: String, secret: String, expiry: String?, count: Int) {
            self.mechanism = mechanism
            self.secret = secret
            self.expiry = expiry
            self.count = count
        }
    }

    /// The SASL2 `<user-agent id>`.
    public var userAgentID: String
    public var saltedPassword: SaltedPassword?
    public var fastToken: FASTToken?

    public init(userAgentID: String, saltedPassword: SaltedPassword? = nil, fastToken: FASTToken? = nil) {
        self.userAgentID = userAgentID
        self.saltedPassword = saltedPassword
        self.fastToken = fastToken
    }
}

extension Store {
    /// What is kept for `account` (its bare JID), if anything.
    public func xmppCredentials(account: JID) throws -> StoredXMPPCredentials? {
        try read { db in
            try db.query("""
                SELECT user_agent_id, scram_hash, scram_salt, scram_iterations, salted_password,
                       fast_mechanism, fast_token, fast_expiry, fast_count
                FROM xmpp_credentials WHERE account = ?
                """, account.bare.description) { row -> StoredXMPPCredentials? in
                guard let userAgentID = row.string(0) else { return nil }
                var credentials = StoredXMPPCredentials(userAgentID: userAgentID)
                if let hash = row.string(1), let iterations = row.int(3) {
                    credentials.saltedPassword = .init(hash: hash, salt: row.blob(2), iterations: iterations, bytes: row.blob(4))
                }
                if let mechanism = row.string(5), let secret = row.string(6) {
                    credentials.fastToken = .init(mechanism: mechanism, secret: secret, expiry: row.string(7), count: row.int(8) ?? 0)
                }
                return credentials
            }.first ?? nil
        }
    }

    /// Keeps `credentials` for `account`, replacing what was kept — or, unless `replacing`, only if nothing was (the
    /// first of two processes to make an account's user-agent id wins).
    public func saveXMPPCredentials(_ credentials: StoredXMPPCredentials, account: JID, replacing: Bool = true) throws {
        let salted = credentials.saltedPassword, token = credentials.fastToken
        let onConflict = replacing ? """
            UPDATE SET user_agent_id = excluded.user_agent_id, scram_hash = excluded.scram_hash,
                scram_salt = excluded.scram_salt, scram_iterations = excluded.scram_iterations,
                salted_password = excluded.salted_password, fast_mechanism = excluded.fast_mechanism,
                fast_token = excluded.fast_token, fast_expiry = excluded.fast_expiry, fast_count = excluded.fast_count
            """ : "NOTHING"
        try write { db in
            _ = try db.run("""
                INSERT INTO xmpp_credentials (account, user_agent_id, scram_hash, scram_salt, scram_iterations, salted_password,
                                              fast_mechanism, fast_token, fast_expiry, fast_count)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (account) DO \(onConflict)
                """, account.bare.description, credentials.userAgentID, salted?.hash, salted.map { SQLValue.blob($0.salt) },
                salted?.iterations, salted.map { SQLValue.blob($0.bytes) }, token?.mechanism, token?.secret, token?.expiry,
                token?.count)
        }
    }
}
