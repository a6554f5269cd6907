import TestSupport
import Testing
@testable import Upstream

@Suite(.offPool) struct AddressPolicyTests {
    @Test(arguments: [
        "127.0.0.1", "127.9.9.9", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
        "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "::1", "::", "fe80::1", "fc00::1", "fd12::1",
        "::ffff:127.0.0.1", "::ffff:10.1.2.3", "ff02::1", "not-an-ip",
    ])
    func nonPublic(_ ip: String) { #expect(!AddressPolicy.isPublic(ip)) }

    @Test(arguments: ["8.8.8.8", "17.253.144.10", "151.101.1.69", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"])
    func publicAddresses(_ ip: String) { #expect(AddressPolicy.isPublic(ip)) }
}
