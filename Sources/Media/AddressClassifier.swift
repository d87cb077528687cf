/// Whether an IP address the bridge is about to connect to lies in public space, so that a URL from an XMPP user
/// cannot make the bridge fetch from loopback, private networks, link-local (cloud metadata) or other special
/// ranges (an SSRF guard; IANA special-purpose registries, RFC 6890). Pure.
public enum AddressClassifier {
    /// The class of an address: `.public`, or the special range it is in.
    public enum Verdict: Sendable, Equatable {
        case `public`
        case special(String)

        public var isPublic: Bool { self == .public }
    }

    /// Classifies a 4-byte IPv4 address.
    public static func classify(ipv4 a: [UInt8]) -> Verdict {
        guard a.count == 4 else { return .special("malformed") }
        switch (a[0], a[1]) {
        case (0, _): return .special("this network")
        case (10, _): return .special("private")
        case (100, 64...127): return .special("shared address space")
        case (127, _): return .special("loopback")
        case (169, 254): return .special("link-local")
        case (172, 16...31): return .special("private")
        case (192, 168): return .special("private")
        case (198, 18...19): return .special("benchmarking")
        case (224...239, _): return .special("multicast")
        case (240...255, _): return .special("reserved")
        default: break
        }
        switch (a[0], a[1], a[2]) {
        case (192, 0, 0): return .special("IETF protocol assignments")
        case (192, 0, 2), (198, 51, 100), (203, 0, 113): return .special("documentation")
        default: return .public
        }
    }

    /// Classifies a 16-byte IPv6 address (IPv4-mapped, NAT64 and 6to4 forms are judged by their IPv4 address).
    public static func classify(ipv6 a: [UInt8]) -> Verdict {
        guard a.count == 16 else { return .special("malformed") }
        if a[0..<15].allSatisfy({ $0 == 0 }) { return a[15] == 1 ? .special("loopback") : .special("unspecified") }
        if a[0..<10].allSatisfy({ $0 == 0 }), a[10] == 0xff, a[11] == 0xff { return classify(ipv4: Array(a[12...])) }
        if a[0..<12] == [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0][...] { return classify(ipv4: Array(a[12...])) }
        if a[0] == 0x20, a[1] == 0x02 { return classify(ipv4: Array(a[2..<6])) }
        if a[0..<12].allSatisfy({ $0 == 0 }) { return .special("IPv4-compatible") }
        if a[0] & 0xfe == 0xfc { return .special("unique local") }
        if a[0] == 0xfe, a[1] & 0xc0 == 0x80 { return .special("link-local") }
        if a[0] == 0xfe, a[1] & 0xc0 == 0xc0 { return .special("site-local") }
        if a[0] == 0xff { return .special("multicast") }
        if a[0] == 0x20, a[1] == 0x01, a[2] == 0x0d, a[3] == 0xb8 { return .special("documentation") }
        if a[0] == 0x01, a[1..<8].allSatisfy({ $0 == 0 }) { return .special("discard-only") }
        return .public
    }
}
