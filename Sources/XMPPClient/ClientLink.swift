import Network
import XMLStream
import XMPP

/// One TCP connection of the client link and its protocol state. Owned by the ``ClientConnection`` actor (not
/// `Sendable`); replaced on every reconnect and identified by ``number``, so late callbacks from an old one are ignored.
final class ClientLink {
    let number: Int
    let socket: TCPConnection
    /// A fresh parser per stream: the stream restarts after TLS and after SASL (RFC 6120 §4.3.3).
    var parser: XMLStreamParser
    var machine: ClientStateMachine
    let parserLimits: XMLStreamLimits
    /// Stanzas may flow.
    var established = false
    /// The machine asked to disconnect; nothing more is processed or sent.
    var finished = false
    /// Why it ended (nil: graceful close, or cancelled).
    var error: ClientError?
    /// Scratch buffer for parser events, reused across chunks.
    var events: [XMLStreamEvent] = []
    /// The parser must be replaced before the next bytes are fed (set while a chunk's events are being performed).
    var parserResetPending = false
    /// The TLS layer once negotiated; writes and reads then go through it.
    var tls: TLSStream?
    /// The machine asked for the TLS handshake (after `<proceed/>`): the read loop does it before reading on.
    var tlsRequested = false
    /// This connection took up the earlier session (XEP-0198 `<resumed/>`) instead of binding a new one.
    var resumed = false

    /// Writes to the server, through TLS once it is up.
    func write(_ bytes: [UInt8]) throws(NetworkError) {
        if let tls { try tls.write(bytes) } else { try socket.write(bytes) }
    }

    init(number: Int, socket: TCPConnection, machine: ClientStateMachine, parserLimits: XMLStreamLimits) {
        self.number = number
        self.socket = socket
        self.machine = machine
        self.parserLimits = parserLimits
        self.parser = XMLStreamParser(limits: parserLimits)
    }
}
