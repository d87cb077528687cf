import Network
import XMLStream

/// One TCP connection of the component and its protocol state. Owned by the ``ComponentConnection`` actor (not
/// `Sendable`); replaced by a new one on every reconnect, identified by ``number`` so that late callbacks from an
/// old connection are ignored.
final class ComponentLink {
    let number: Int
    let socket: TCPConnection
    let parser: XMLStreamParser
    var machine: ComponentStateMachine
    /// Whether an earlier connection of the same `run()` had been established (reported with `.connected`).
    let reconnected: Bool
    /// The handshake succeeded.
    var established = false
    /// The machine asked to disconnect; nothing more is processed or sent.
    var finished = false
    /// Why it ended (nil: graceful close, or cancelled).
    var error: ComponentError?
    /// Scratch buffer for parser events, reused across chunks.
    var events: [XMLStreamEvent] = []

    init(number: Int, socket: TCPConnection, configuration: ComponentConfiguration, reconnected: Bool) {
        self.number = number
        self.socket = socket
        self.parser = XMLStreamParser(limits: configuration.parserLimits)
        self.machine = ComponentStateMachine(configuration: configuration.machineConfiguration)
        self.reconnected = reconnected
    }
}
