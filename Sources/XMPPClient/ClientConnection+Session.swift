import IsthmusCommon
import XMPP

/// What the shared request logic (``StanzaSession``: IQs, MUC joins, archive queries) needs of the client connection.
extension ClientConnection: StanzaSession {
    package var requestTimeout: Duration { configuration.requestTimeout }
    package var sessionClock: TimeSource { configuration.timeSource }
    package var sessionLogger: Logger { logger }
    /// The account.
    package var defaultRequester: JID? { accountJID }
}
