import Locking

/// The circuit breakers, keyed by what fails together. The fixed API upstreams (Flickr,
/// iTunes, Kiva) fail as a host, so they share one breaker per host. A podcast feed's URL
/// is chosen by its publisher, and one podcast host serves thousands of feeds: a host-wide
/// breaker would let one broken or hostile feed block every podcast on that host, so each
/// feed URL gets its own. Feed breakers are bounded (an attacker can name endless URLs):
/// past `maxFeeds`, a closed one with no failures (no state worth keeping) goes first,
/// else the least recently used.
final class BreakerTable: Sendable {
    struct Key: Hashable, Sendable {
        /// Host for API upstreams, the whole URL for publisher-chosen feeds.
        let name: String
        let perFeed: Bool
    }

    private struct Slot {
        let breaker: CircuitBreaker
        var lastUse: UInt64
    }

    private struct State {
        var slots: [Key: Slot] = [:]
        var feedCount = 0
        var clock: UInt64 = 0
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

    func breaker(_ key: Key, now: Double) -> CircuitBreaker {
        state.withLock { s in
            s.clock &+= 1
            if var slot = s.slots[key] {
                slot.lastUse = s.clock
                s.slots[key] = slot
                return slot.breaker
            }
            if key.perFeed {
                if s.feedCount >= maxFeeds { evictOneFeed(&s, now: now) }
                s.feedCount += 1
            }
            let b = CircuitBreaker(threshold: threshold, cooldown: cooldown)
            s.slots[key] = Slot(breaker: b, lastUse: s.clock)
            return b
        }
    }

    private func evictOneFeed(_ s: inout State, now: Double) {
        var victim: (key: Key, lastUse: UInt64)?
        for (key, slot) in s.slots where key.perFeed {
            if slot.breaker.isPristine {
                victim = (key, slot.lastUse)
                break
            }
            if victim == nil || slot.lastUse < victim?.lastUse ?? .max { victim = (key, slot.lastUse) }
        }
        if let victim {
            s.slots[victim.key] = nil
            s.feedCount -= 1
        }
    }

    /// API hosts one by one; feed breakers as counts by state (a series per feed URL would
    /// let publishers grow /metrics without bound).
    func snapshot(now: Double) -> (hosts: [(host: String, state: CircuitBreaker.State)], feeds: BreakerCounts) {
        let slots = state.withLock { s in s.slots.map { ($0.key, $0.value.breaker) } }
        var hosts: [(host: String, state: CircuitBreaker.State)] = []
        var feeds = BreakerCounts()
        for (key, breaker) in slots {
            let st = breaker.state(now: now)
            if key.perFeed { feeds.add(st) } else { hosts.append((key.name, st)) }
        }
        return (hosts.sorted { $0.host < $1.host }, feeds)
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
