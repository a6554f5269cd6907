import Locking
import Upstream

/// Per-client quota of upstream-costing requests (`CLIENT_MISS_RATE_PER_MIN`): a token
/// bucket per client, `perMinute / 6` (at least 1) at once, refilled at `perMinute / 60`
/// a second. Client state is a bounded LRU (`CLIENT_STATE_MAX` clients): arrays linked by
/// index, so lookup, touch and eviction are O(1) and memory is fixed once full (about
/// 100 bytes a client). An evicted client simply starts again with a full bucket.
final class ClientLimiter: Sendable {
    private struct Node {
        var key: ClientKey
        var tokens: Double
        var updated: Double
        var newer: Int32
        var older: Int32
    }

    private struct State {
        var index: [ClientKey: Int32] = [:]
        var nodes: [Node] = []
        var newest: Int32 = -1
        var oldest: Int32 = -1
    }

    let perSecond: Double
    let burst: Double
    let maxClients: Int
    private let state = Locked(State())

    init(perMinute: Double, maxClients: Int) {
        perSecond = perMinute / 60
        burst = max(1, (perMinute / 6).rounded(.up))
        self.maxClients = max(1, min(maxClients, Int(Int32.max)))
    }

    var trackedClients: Int { state.withLock { $0.index.count } }

    /// Takes one from the client's bucket: nil when admitted, else seconds until it may retry.
    func admit(_ key: ClientKey, now: Double) -> Double? {
        state.withLock { s in
            let slot: Int32
            if let found = s.index[key] {
                slot = found
                unlink(slot, in: &s)
                let i = Int(slot)
                s.nodes[i].tokens = min(burst, s.nodes[i].tokens + max(0, now - s.nodes[i].updated) * perSecond)
                s.nodes[i].updated = max(s.nodes[i].updated, now)
            } else if s.nodes.count < maxClients {
                slot = Int32(s.nodes.count)
                s.nodes.append(Node(key: key, tokens: burst, updated: now, newer: -1, older: -1))
                s.index[key] = slot
            } else {
                // Full: the least recently seen client's slot is reused.
                slot = s.oldest
                unlink(slot, in: &s)
                let i = Int(slot)
                s.index[s.nodes[i].key] = nil
                s.nodes[i] = Node(key: key, tokens: burst, updated: now, newer: -1, older: -1)
                s.index[key] = slot
            }
            pushNewest(slot, in: &s)
            let i = Int(slot)
            if s.nodes[i].tokens >= 1 {
                s.nodes[i].tokens -= 1
                return nil
            }
            return (1 - s.nodes[i].tokens) / perSecond
        }
    }

    /// Gives back a token taken by `admit` for a fetch that cost the upstream nothing
    /// (another replica's answer found in the shared cache).
    func refund(_ key: ClientKey) {
        state.withLock { s in
            guard let slot = s.index[key] else { return }
            s.nodes[Int(slot)].tokens = min(burst, s.nodes[Int(slot)].tokens + 1)
        }
    }

    private func unlink(_ slot: Int32, in s: inout State) {
        let node = s.nodes[Int(slot)]
        if node.newer >= 0 { s.nodes[Int(node.newer)].older = node.older } else { s.newest = node.older }
        if node.older >= 0 { s.nodes[Int(node.older)].newer = node.newer } else { s.oldest = node.newer }
        s.nodes[Int(slot)].newer = -1
        s.nodes[Int(slot)].older = -1
    }

    private func pushNewest(_ slot: Int32, in s: inout State) {
        s.nodes[Int(slot)].older = s.newest
        s.nodes[Int(slot)].newer = -1
        if s.newest >= 0 { s.nodes[Int(s.newest)].newer = slot }
        s.newest = slot
        if s.oldest < 0 { s.oldest = slot }
    }
}

/// How feed routes tell clients apart and hold each to its miss quota.
struct ClientPolicy: Sendable {
    var resolver = ClientResolver(trusted: TrustedProxies())
    /// nil when `CLIENT_MISS_RATE_PER_MIN` is 0.
    var limiter: ClientLimiter?
    /// With the quota on: counts and logs forwarded requests from untrusted peers.
    var untrustedForwarding: UntrustedForwarding?
}
