import Foundation
import Network
#if canImport(Glibc)
import Glibc
#endif

/// A trivial XEP-0114 component client that does nothing but count: it joins occupants with raw presences, sends
/// groupchat messages from byte templates, and counts the messages it receives with `memmem` (no XML parsing).
/// Every `copies` messages received complete one reflected message, reported to `onMessage` with its index (the fake
/// reflects in order on one stream). Used to measure the fake MUC server's own ceiling.
final class NullComponent: Sendable {
    private let connection: TCPConnection
    let domain: String

    private init(connection: TCPConnection, domain: String) {
        self.connection = connection
        self.domain = domain
    }

    /// Connects and completes the handshake (the fake accepts any digest).
    static func connect(port: Int, copies: Int, domain: String = "null.localhost",
                        onMessage: @escaping @Sendable (Int) -> Void) async throws -> (NullComponent, Task<Void, Never>) {
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        try connection.write(Array(("<?xml version='1.0'?><stream:stream xmlns='jabber:component:accept' "
            + "xmlns:stream='http://etherx.jabber.org/streams' to='\(domain)'>").utf8))
        try connection.write(Array("<handshake>0</handshake>".utf8))
        let component = NullComponent(connection: connection, domain: domain)
        let (ready, readySignal) = AsyncStream.makeStream(of: Void.self)
        let reader = Task {
            let end = Array("</message>".utf8), handshake = Array("<handshake/>".utf8)
            var handshaken = false
            var carry: [UInt8] = []
            var received = 0
            do {
                for try await chunk in connection.inbound {
                    // Keep the last few bytes so a marker split across chunks is still found.
                    let bytes = carry + chunk
                    if !handshaken, count(handshake, in: bytes) > 0 {
                        handshaken = true
                        readySignal.yield()
                    }
                    let before = received
                    received += count(end, in: bytes)
                    carry = Array(bytes.suffix(end.count - 1))
                    for message in stride(from: before / copies, to: received / copies, by: 1) { onMessage(message) }
                }
            } catch {}
            readySignal.finish()
        }
        for await _ in ready { break }
        return (component, reader)
    }

    /// Joins `room` as `nick` from `occupant@domain/r` (no waiting for the answer).
    func join(room: String, nick: String, occupant: String) throws {
        try connection.write(Array("<presence from='\(occupant)@\(domain)/r' to='\(room)/\(nick)'><x xmlns='http://jabber.org/protocol/muc'/></presence>".utf8))
    }

    /// Sends a groupchat message like the bridge's (id + origin-id).
    func sendGroupchat(room: String, occupant: String, body: String, id: String) throws {
        try connection.write(Array(("<message type='groupchat' from='\(occupant)@\(domain)/r' to='\(room)' id='\(id)'><body>\(body)</body>"
            + "<origin-id xmlns='urn:xmpp:sid:0' id='\(id)'/></message>").utf8))
    }

    func close() { connection.abort() }
}

/// Occurrences of `needle` in `haystack` (`memchr` for the first byte, then a compare).
private func count(_ needle: [UInt8], in haystack: [UInt8]) -> Int {
    haystack.withUnsafeBufferPointer { hay in
        needle.withUnsafeBufferPointer { pin in
            var found = 0
            var offset = 0
            while offset + pin.count <= hay.count,
                  let hit = memchr(hay.baseAddress! + offset, Int32(pin[0]), hay.count - offset - pin.count + 1) {
                let index = hay.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if memcmp(hay.baseAddress! + index, pin.baseAddress!, pin.count) == 0 {
                    found += 1
                    offset = index + pin.count
                } else {
                    offset = index + 1
                }
            }
            return found
        }
    }
}
