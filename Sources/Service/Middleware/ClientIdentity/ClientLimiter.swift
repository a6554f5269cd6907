import Primitives
import Upstream

/// Per-client quota of upstream-costing requests (`CLIENT_MISS_RATE_PER_MIN`): a token
/// bucket per client, `TokenCount.burst` (a sixth of a minute's worth) at once, refilled at `perMinute / 60`
/// a second. Client state is a bounded LRU (`CLIENT_STATE_MAX` clients), so lookup, touch
/// and eviction are O(1) and memory is fixed once full (about 100 bytes a client). An
/// evicted client simply starts again with a full bucket.
final class ClientLimiter: Sendable {
    let perSecond: Double
    let burst: Double
    let maxClients: Int
    private let buckets = Locked(LRUTable<ClientKey, TokenCount>())

    init(perMinute: Double, maxClients: Int) {
        perSecond = perMinute / 60
        burst = Double(TokenCount.burst(perMinute: perMinute))
        self.maxClients = max(1, min(maxClients, Int(Int32.max)))
    }

    var trackedClients: Int { buckets.withLock { $0.count } }

    /// Takes `cost` from the client's bucket: nil when admitted, else seconds until it may retry.
    func admit(_ key: ClientKey, now: Double, cost: Double = 1) -> Double? {
        buckets.withLock { table in
            var bucket = table.touch(key) ?? TokenCount(capacity: burst, now: now)
            let taken = bucket.take(now: now, capacity: burst, perSecond: perSecond, cost: cost)
            if table.peek(key) == nil, table.count >= maxClients { table.removeOldest() }  // the least recently seen client goes
            table.set(key, bucket)
            return taken.granted ? nil : taken.retryAfter
        }
    }

    /// Gives back a token taken by `admit` for a fetch that cost the upstream nothing
    /// (another replica's answer found in the shared cache).
    func refund(_ key: ClientKey, cost: Double = 1) {
        buckets.withLock { table in
            guard var bucket = table.peek(key) else { return }
            bucket.giveBack(capacity: burst, cost: cost)
            table.set(key, bucket)
        }
    }
}
