import FuzzSupport
import IsthmusCommon
@testable import Bridge

/// The identifier codecs between the two networks, on arbitrary strings (JIDs, nicks and Matrix ids are chosen by
/// remote users). Round-trip properties:
/// - ``GhostLocalpartCodec``: `decode(encode(s)) == s` for every string, and a localpart that decodes is exactly the
///   encoding of what it decodes to (one canonical form, so two ghosts never share an identity);
/// - ``GhostNamespace``: every (non-empty) identity gets a valid user id of at most 255 bytes that is recognised as a ghost and
///   gives the identity back (short form) or nothing (hashed long form); a user id that maps to an identity is that
///   identity's ghost;
/// - ``JID`` and ``UserID`` parse their own text form back to the same value;
/// - ``BridgeNaming``: every valid Matrix user gets a puppet JID under the component whose localpart unescapes
///   (XEP-0106) back to the user id — or, when JID case folding changed it, to the folded id plus a digest of the
///   exact one — so two users never share an occupant, and none has the bridge's own occupant's JID; nicks are never
///   empty and carry no control characters.
@main enum Harness { static func main() { runFuzzer(fuzzIdentifiers) } }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIdentifiers(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let control = input.byte()
    let text = String(decoding: input.rest(), as: UTF8.self)

    let encoded = GhostLocalpartCodec.encode(text)
    guard GhostLocalpartCodec.decode(encoded) == text else { fuzzFailure("codec does not round-trip \(text.debugDescription)") }
    if let decoded = GhostLocalpartCodec.decode(text), GhostLocalpartCodec.encode(decoded) != text {
        fuzzFailure("\(text.debugDescription) decodes but is not canonical")
    }

    // Identities are bare JIDs or a room JID with an occupant key: never empty.
    let namespace = control & 1 == 0 ? shortServer : longServer
    if !text.isEmpty {
        let ghost = namespace.userID(for: text)
        guard ghost.rawValue.utf8.count <= GhostNamespace.maximumUserIDLength, UserID(ghost.rawValue) == ghost,
              namespace.isGhost(ghost), !namespace.isBot(ghost) else { fuzzFailure("bad ghost \(ghost) for \(text.debugDescription)") }
        if let identity = namespace.identity(of: ghost), identity != text { fuzzFailure("ghost \(ghost) gives back \(identity)") }
    }
    if let user = UserID(text) {
        if let identity = namespace.identity(of: user), namespace.userID(for: identity) != user {
            fuzzFailure("\(user) maps to \(identity.debugDescription), whose ghost is another user")
        }
        checkPuppet(user)
    }

    if let jid = JID(text) {
        guard JID(jid.description) == jid, JID(jid.bare.description) == jid.bare else { fuzzFailure("JID \(jid) does not round-trip") }
    }
    let nick = BridgeNaming.sanitizeNick(text)
    guard !nick.isEmpty, !nick.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
        fuzzFailure("bad nick \(nick.debugDescription) for \(text.debugDescription)")
    }
    return 0
}

private let shortServer = GhostNamespace(prefix: "_xmpp_", serverName: "example.org", botLocalpart: "isthmus")!
private let longServer = GhostNamespace(prefix: "_xmpp_", serverName: String(repeating: "long.", count: 40) + "org", botLocalpart: "isthmus")!
private let naming = BridgeNaming(componentDomain: "matrix.example.org", botNick: "Isthmus")!

private func checkPuppet(_ user: UserID) {
    guard let puppet = naming.puppetJID(for: user), let localpart = puppet.localpart else {
        fuzzFailure("no puppet JID for \(user)")
    }
    // Ids that case folding would change carry `#` and a digest of the exact id (users differing in case differ).
    let plain = localpart.split(separator: "#", omittingEmptySubsequences: false)
    let folded = String(user.rawValue.dropFirst()).lowercased()
    guard naming.isOurs(puppet), puppet.bare != naming.botOccupant.bare,
          unescapeXEP0106(localpart) == String(user.rawValue.dropFirst())
            || (plain.count >= 2 && plain.last?.count == 12 && unescapeXEP0106(plain.dropLast().joined(separator: "#")).lowercased() == folded)
    else { fuzzFailure("puppet \(puppet) of \(user) does not give the user back") }
}

/// XEP-0106 §4 unescaping of the sequences ``BridgeNaming`` writes (every `\` is escaped, so `\xx` is unambiguous).
private func unescapeXEP0106(_ text: String) -> String {
    let table: [String: Character] = ["20": " ", "22": "\"", "26": "&", "27": "'", "2f": "/", "3a": ":", "3c": "<",
                                      "3e": ">", "40": "@", "5c": "\\"]
    var result = ""
    var rest = text[...]
    while let first = rest.first {
        if first == "\\", let character = table[String(rest.dropFirst().prefix(2))] {
            result.append(character)
            rest = rest.dropFirst(3)
        } else {
            result.append(first)
            rest = rest.dropFirst()
        }
    }
    return result
}
