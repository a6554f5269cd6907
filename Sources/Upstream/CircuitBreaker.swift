import Primitives

/// A circuit breaker (per API host or per feed URL, see `BreakerTable`): after `threshold` consecutive failures it fails fast for
/// `cooldown` seconds, then lets one probe through; success closes it again.
public final class CircuitBreaker: Sendable {
    public enum State: Sendable, Equatable {
        case closed
        case open
        case halfOpen
    }

    private struct Inner {
        var failures = 0
        var openedAt: Double?
        var probing = false
    }

    let threshold: Int
    let cooldown: Double
    private let inner = Locked(Inner())

    public init(threshold: Int, cooldown: Double) {
        self.threshold = threshold
        self.cooldown = cooldown
    }

    /// Whether a request may go out now; when not, how long until the next probe.
    func admit(now: Double) -> (allowed: Bool, retryAfter: Double) {
        inner.withLock { s in
            guard let opened = s.openedAt else { return (true, 0) }
            let wait = opened + cooldown - now
            if wait > 0 { return (false, wait) }
            if s.probing { return (false, 1) }
            s.probing = true
            return (true, 0)
        }
    }

    /// Gives back a probe slot that was admitted but not used.
    func releaseProbe() {
        inner.withLock { $0.probing = false }
    }

    func record(success: Bool, now: Double) {
        inner.withLock { s in
            if success {
                s = Inner()
                return
            }
            s.failures += 1
            if s.probing || s.failures >= threshold {
                s.openedAt = now
                s.probing = false
            }
        }
    }

    /// Closed with no failure counted: holds nothing a new breaker would not.
    var isPristine: Bool { inner.withLock { $0.failures == 0 && $0.openedAt == nil && !$0.probing } }

    public func state(now: Double) -> State {
        inner.withLock { s in
            guard let opened = s.openedAt else { return .closed }
            return now - opened >= cooldown || s.probing ? .halfOpen : .open
        }
    }
}
