import Primitives

/// Where an upstream's tokens come from (a local token bucket; the shared Redis budget is
/// consulted after the fair queue, see `SharedRateBudget`).
/// The fair queue in front of it only takes tokens and asks when the next one is due.
public protocol TokenSource: Sendable {
    /// Steady refill rate in tokens per second (for wait estimates).
    var perSecond: Double { get }
    /// Takes a token, or says how many seconds until one is available.
    func take(now: Double) -> (granted: Bool, retryAfter: Double)
}
