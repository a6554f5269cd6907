import Primitives

/// Where this replica's flights wait for other replicas' fetches. Every key waited on is
/// asked about in one round trip per `interval` (`SharedCacheTier.watch`), however many wait:
/// a storm of a thousand feeds being fetched elsewhere costs one command every 20 ms, not a
/// thousand polls. A waiter is let go when its key's answer is fresh, its fetch failed, its
/// lock is gone (the holder died: take over), at its deadline, or when the tier is not
/// connected. A slow (or silent) tier only means asking again.
final class SharedWaitRoom: Sendable {
    enum Outcome: Sendable, Equatable {
        case settled(SharedWatch)
        case timedOut
        case unreachable
        case cancelled
    }

    private struct Waiter {
        let key: String
        let deadline: Double
        let continuation: CheckedContinuation<Outcome, Never>
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var next: UInt64 = 0
        var polling = false
    }

    private let tier: any SharedCacheTier
    private let interval: Double
    private let clock: @Sendable () -> Double
    private let state = Locked(State())
    /// Keys asked about in one round trip at most (a longer list is asked in several).
    static let keysPerWatch = 256

    init(tier: any SharedCacheTier, interval: Double, clock: @escaping @Sendable () -> Double) {
        self.tier = tier
        self.interval = max(0.001, interval)
        self.clock = clock
    }

    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Waits until `key`'s fetch elsewhere settles, or `deadline`.
    func wait(_ key: String, until deadline: Double) async -> Outcome {
        let id = state.withLock { s -> UInt64 in
            s.next &+= 1
            return s.next
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let (start, immediate) = state.withLock { s -> (Bool, Outcome?) in
                    if Task.isCancelled { return (false, .cancelled) }
                    s.waiters[id] = Waiter(key: key, deadline: deadline, continuation: continuation)
                    guard !s.polling else { return (false, nil) }
                    s.polling = true
                    return (true, nil)
                }
                if let immediate { continuation.resume(returning: immediate) }
                if start { Task.detached { [self] in await SharedTierCall.patiently { await poll() } } }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(returning: .cancelled)
        }
    }

    /// One loop while anyone waits: sleep, ask about every key at once, let go who is settled.
    private func poll() async {
        while true {
            try? await Task.sleep(for: .milliseconds(Saturating.int((interval * 1000).rounded(.up), in: 1...60_000)))
            let keys = state.withLock { s -> [String]? in
                if s.waiters.isEmpty {
                    s.polling = false
                    return nil
                }
                return Array(Set(s.waiters.values.map(\.key)))
            }
            guard let keys else { return }
            var settled: [String: SharedWatch] = [:]
            var answered = true
            var at = 0
            while at < keys.count {
                let chunk = Array(keys[at..<min(keys.count, at + Self.keysPerWatch)])
                at += chunk.count
                guard let states = await tier.watch(chunk) else {
                    answered = false
                    continue
                }
                for (key, watch) in zip(chunk, states) where watch != .locked { settled[key] = watch }
            }
            let unreachable = !answered && tier.health == .down
            let now = clock()
            let done = state.withLock { s -> [(CheckedContinuation<Outcome, Never>, Outcome)] in
                var out: [(CheckedContinuation<Outcome, Never>, Outcome)] = []
                for (id, w) in s.waiters {
                    let outcome: Outcome?
                    if let watch = settled[w.key] {
                        outcome = .settled(watch)
                    } else if unreachable {
                        outcome = .unreachable
                    } else if now >= w.deadline {
                        outcome = .timedOut
                    } else {
                        outcome = nil
                    }
                    if let outcome {
                        s.waiters[id] = nil
                        out.append((w.continuation, outcome))
                    }
                }
                return out
            }
            for (continuation, outcome) in done { continuation.resume(returning: outcome) }
        }
    }
}
