import Foundation
import IsthmusCommon

/// A channel-binding type the client can compute (names from the IANA registry, announced by XEP-0440).
public enum ChannelBindingType: String, Sendable, Hashable, CaseIterable {
    /// The TLS exporter for label `EXPORTER-Channel-Binding`, empty context, 32 bytes (RFC 9266).
    case tlsExporter = "tls-exporter"
    /// The hash of the server's certificate (RFC 5929 §4).
    case tlsServerEndPoint = "tls-server-end-point"
}

/// What the client says about channel binding in its GS2 header (RFC 5802 §6, §7).
public enum ChannelBinding: Sendable, Hashable {
    /// The client does not support channel binding: GS2 flag `n`.
    case notSupported
    /// The client supports channel binding but the server offered no `-PLUS` mechanism: GS2 flag `y`, which lets a
    /// server that does support it detect that a MITM removed its `-PLUS` mechanisms.
    case notOfferedByServer
    /// The exchange is bound to the TLS channel: GS2 flag `p=<type>`, with `data` taken from the TLS connection.
    case bound(type: ChannelBindingType, data: [UInt8])

    /// The GS2 header without an authorization identity: `n,,`, `y,,` or `p=<type>,,`.
    public var gs2Header: String {
        switch self {
        case .notSupported: "n,,"
        case .notOfferedByServer: "y,,"
        case .bound(let type, _): "p=\(type.rawValue),,"
        }
    }

    /// The value of client-final's `c=`: base64 of the GS2 header followed by the binding data (none unless `.bound`).
    public var channelBindingAttribute: String {
        var input = Array(gs2Header.utf8)
        if case .bound(_, let data) = self { input += data }
        return Data(input).base64EncodedString()
    }
}

/// The mechanisms and channel-binding types the server advertised before authentication, as XEP-0474 hashes them.
/// Names are kept exactly as received, including ones this client does not implement (`PLAIN`, `tls-unique`), because
/// the server hashes everything it advertised.
public struct SASLOffer: Sendable, Hashable {
    /// Every `<mechanism/>` of `<mechanisms/>` (RFC 6120 §6.4.1) or of SASL2's `<authentication/>`.
    public var mechanisms: [String]
    /// Every type of XEP-0440's `<sasl-channel-binding/>`, or `nil` when the server sent no such element.
    public var channelBindingTypes: [String]?

    public init(mechanisms: [String], channelBindingTypes: [String]?) {
        self.mechanisms = mechanisms
        self.channelBindingTypes = channelBindingTypes
    }

    /// XEP-0474's string S: the mechanisms sorted by octet and joined by 0x1E; then, if channel-binding types were
    /// advertised, 0x1F and the types sorted and joined the same way.
    public var downgradeProtectionInput: [UInt8] {
        func joined(_ names: [String]) -> [UInt8] {
            Array(names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map { Array($0.utf8) }.joined(separator: [0x1E]))
        }
        var input = joined(mechanisms)
        if let channelBindingTypes { input += [0x1F] + joined(channelBindingTypes) }
        return input
    }
}
