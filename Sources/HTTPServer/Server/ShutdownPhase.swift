import Synchronization

/// Where the server is in its shutdown, one value for everyone who asks: readiness reports
/// 503 from the announcement on (so a load balancer moves traffic first), the loops stop
/// accepting and close idle connections once draining starts.
public final class ShutdownPhase: Sendable {
    private static let serving: UInt8 = 0, announced: UInt8 = 1, draining: UInt8 = 2
    private let phase = Atomic<UInt8>(ShutdownPhase.serving)

    public init() {}

    /// Shutdown has been announced (readiness fails) or is under way.
    public var isAnnounced: Bool { phase.load(ordering: .relaxed) >= Self.announced }
    /// The loops are draining: no new connections, no keep-alive.
    public var isDraining: Bool { phase.load(ordering: .relaxed) == Self.draining }

    /// Readiness goes 503; requests are still served as before.
    public func announce() { _ = phase.compareExchange(expected: Self.serving, desired: Self.announced, ordering: .relaxed) }

    func beginDraining() { phase.store(Self.draining, ordering: .relaxed) }
}
