import Primitives

/// Keeps the fetch locks this replica holds alive: every lock renewed in one round trip per
/// third of a lock's life (`SharedCacheTier.renew(_:ttl:)`), however many fetches are under
/// way. A storm of a thousand feeds queued for their hosts costs three commands a second, not
/// two thousand. After a renewal the tier did not answer, the next comes soon (a twentieth of
/// the life): two missed in a row (a paused Redis, then a reconnect still backing off) would
/// let the locks lapse and waiters fetch again.
final class SharedLockKeeper: Sendable {
    private struct State {
        var held: [UInt64: (key: String, token: String)] = [:]
        var next: UInt64 = 0
        var running = false
    }

    private let tier: any SharedCacheTier
    private let ttl: Double
    private let state = Locked(State())
    static let locksPerRenewal = 256

    init(tier: any SharedCacheTier, ttl: Double) {
        self.tier = tier
        self.ttl = ttl
    }

    var holding: Int { state.withLock { $0.held.count } }

    /// Renews `key`'s lock until `release(_:)` with what this returns.
    func hold(_ key: String, token: String) -> UInt64 {
        let (id, start) = state.withLock { s -> (UInt64, Bool) in
            s.next &+= 1
            s.held[s.next] = (key, token)
            defer { s.running = true }
            return (s.next, !s.running)
        }
        if start { Task.detached { [self] in await SharedTierCall.patiently { await run() } } }
        return id
    }

    func release(_ id: UInt64) { state.withLock { _ = $0.held.removeValue(forKey: id) } }

    private func run() async {
        var answered = true
        while true {
            try? await Task.sleep(for: .milliseconds(Saturating.int((ttl / (answered ? 3 : 20) * 1000).rounded(.up), in: 1...600_000)))
            let locks = state.withLock { s -> [(key: String, token: String)]? in
                if s.held.isEmpty {
                    s.running = false
                    return nil
                }
                return Array(s.held.values)
            }
            guard let locks else { return }
            answered = true
            var at = 0
            while at < locks.count {
                let chunk = Array(locks[at..<min(locks.count, at + Self.locksPerRenewal)])
                at += chunk.count
                // A lock another holder has taken is not ours to renew (the tier checks the token).
                if await tier.renew(chunk, ttl: ttl) == nil { answered = false }
            }
        }
    }
}
