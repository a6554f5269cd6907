import Primitives
import Synchronization

/// Who is asking for an upstream token: an opaque 128-bit identity (the service
/// uses the client's IP address, IPv4 mapped into IPv6). Upstream knows nothing more.
public struct ClientKey: Sendable, Hashable {
    public let high: UInt64
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }
}
