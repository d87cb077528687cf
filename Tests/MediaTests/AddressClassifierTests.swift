import Media
import Testing

@Suite struct AddressClassifierTests {
    @Test(arguments: [
        [127, 0, 0, 1], [10, 1, 2, 3], [172, 16, 0, 1], [172, 31, 255, 255], [192, 168, 1, 1], [169, 254, 169, 254],
        [100, 64, 0, 1], [0, 0, 0, 0], [224, 0, 0, 1], [255, 255, 255, 255], [198, 18, 0, 1], [192, 0, 2, 1],
    ] as [[UInt8]])
    func specialIPv4IsRefused(_ address: [UInt8]) {
        #expect(!AddressClassifier.classify(ipv4: address).isPublic)
    }

    @Test(arguments: [[8, 8, 8, 8], [1, 1, 1, 1], [172, 32, 0, 1], [100, 128, 0, 1], [93, 184, 216, 34]] as [[UInt8]])
    func publicIPv4IsAllowed(_ address: [UInt8]) {
        #expect(AddressClassifier.classify(ipv4: address) == .public)
    }

    static func v6(_ groups: [UInt16]) -> [UInt8] { groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] } }

    @Test func ipv6() {
        #expect(AddressClassifier.classify(ipv6: Self.v6([0, 0, 0, 0, 0, 0, 0, 1])) == .special("loopback"))
        #expect(AddressClassifier.classify(ipv6: Self.v6([0, 0, 0, 0, 0, 0, 0, 0])) == .special("unspecified"))
        #expect(!AddressClassifier.classify(ipv6: Self.v6([0xfe80, 0, 0, 0, 0, 0, 0, 1])).isPublic)
        #expect(!AddressClassifier.classify(ipv6: Self.v6([0xfd00, 0, 0, 0, 0, 0, 0, 1])).isPublic)
        #expect(!AddressClassifier.classify(ipv6: Self.v6([0xff02, 0, 0, 0, 0, 0, 0, 1])).isPublic)
        // IPv4-mapped, NAT64 and 6to4 forms are judged by the IPv4 address inside.
        #expect(AddressClassifier.classify(ipv6: Self.v6([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1])) == .special("loopback"))
        #expect(AddressClassifier.classify(ipv6: Self.v6([0, 0, 0, 0, 0, 0xffff, 0x0808, 0x0808])) == .public)
        #expect(AddressClassifier.classify(ipv6: Self.v6([0x64, 0xff9b, 0, 0, 0, 0, 0x0a00, 1])) == .special("private"))
        #expect(AddressClassifier.classify(ipv6: Self.v6([0x2002, 0xc0a8, 0x0101, 0, 0, 0, 0, 1])) == .special("private"))
        #expect(AddressClassifier.classify(ipv6: Self.v6([0x2001, 0x4860, 0x4860, 0, 0, 0, 0, 0x8888])) == .public)
    }
}
