import Primitives

/// The circuit breakers, keyed by what fails together. The fixed API upstreams (those with
/// configured endpoints) fail as a host, so they share one breaker per host. A podcast feed's URL
/// is chosen by its publisher, and one podcast host serves thousands of feeds: a host-wide
/// breaker would let one broken or hostile feed block every podcast on that host, so each
/// feed URL gets its own. Feed breakers are a bounded LRU (an attacker can name endless
/// URLs); an evicted one only means that feed gets `threshold` more tries.
final class BreakerTable: Sendable {
    struct Key: Hashable, Sendable {
        /// Host for API upstreams, the whole URL for publisher-chosen feeds.
        let name: String
        let perFeed: Bool
    }

    private struct State {
        var hosts: [String: CircuitBreaker] = [:]
        var feeds = LRUTable<String, CircuitBreaker>()
    }

    let threshold: Int
    let cooldown: Double
    let maxFeeds: Int
    private let state = Locked(State())

    init(threshold: Int, cooldown: Double, maxFeeds: Int = 4096) {
        self.threshold = threshold
        self.cooldown = cooldown
        self.maxFeeds = max(1, maxFeeds)
    }

    static func key(for request: UpstreamRequest, host: String) -> Key {
        request.urlChosenByThirdParty ? Key(name: request.url, perFeed: true) : Key(name: host, perFeed: false)
    }

    func breaker(_ key: Key) -> CircuitBreaker {
        state.withLock { s in
            if !key.perFeed {
                if let b = s.hosts[key.name] { return b }
                let b = CircuitBreaker(threshold: threshold, cooldown: cooldown)
                s.hosts[key.name] = b
                return b
            }
            if let b = s.feeds.touch(key.name) { return b }
            if s.feeds.count >= maxFeeds { s.feeds.removeOldest() }
            let b = CircuitBreaker(threshold: threshold, cooldown: cooldown)
            s.feeds.set(key.name, b)
            return b
        }
    }

    /// API hosts one by one; feed breakers as counts by state (a series per feed URL would
    /// let publishers grow /metrics without bound).
    func snapshot(now: Double) -> (hosts: [(host: String, state: CircuitBreaker.State)], feeds: BreakerCounts) {
        let (hosts, feeds) = state.withLock { s in (s.hosts.map { ($0.key, $0.value) }, s.feeds.values) }
        var counts = BreakerCounts()
        for breaker in feeds { counts.add(breaker.state(now: now)) }
        return (hosts.map { ($0.0, $0.1.state(now: now)) }.sorted { $0.host < $1.host }, counts)
    }
}

/// How many feed breakers are in each state.
public struct BreakerCounts: Sendable, Equatable {
    public var closed = 0
    public var halfOpen = 0
    public var open = 0

    public init() {}

    mutating func add(_ state: CircuitBreaker.State) {
        switch state {
        case .closed: closed += 1
        case .halfOpen: halfOpen += 1
        case .open: open += 1
        }
    }
}
