import Primitives
import Synchronization

/// Connections to one host, shared fairly between clients.
///
/// At most `limit` requests go to one host (name and port) at a time, as a polite client
/// keeps to (libcurl's per-host limit is the same number, so no queue forms inside it). The
/// rest wait, each up to its deadline, and a freed slot goes round-robin across clients: the
/// waiting client served least recently first, FIFO within a client. So one client's
/// thousand feeds on a big hosting platform cannot sit in front of another's one. Background
/// work (no client) is one more client in the round.
public final class HostSlots: Sendable {
    public struct Stats: Sendable, Equatable {
        /// Requests waiting for a slot now, over every host.
        public var waiting = 0
        public var waitsGranted = 0
        public var waitsTimedOut = 0
        public var waitSeconds = 0.0

        public init() {}
    }

    public enum Outcome: Sendable, Equatable {
        case granted(waited: Double)
        /// The deadline came first: nothing was sent.
        case timedOut
        case cancelled
    }

    /// The round-robin's key: a client, or background work.
    private enum Owner: Hashable {
        case client(ClientKey)
        case background
    }

    private struct Waiter {
        let id: UInt64
        let host: String
        let owner: Owner
        let sequence: UInt64
        let enqueued: Double
        let deadline: Double
        let continuation: CheckedContinuation<Outcome, Never>
    }

    private struct Host {
        var active = 0
        /// Waiter ids per owner, in arrival order.
        var queues: [Owner: [UInt64]] = [:]
        var waiting = 0
        /// Grant number per owner served while others waited; 0 (absent) goes first. Forgotten
        /// whenever nobody waits, so it holds at most the owners of one busy spell.
        var lastGrant: [Owner: UInt64] = [:]
        var grants: UInt64 = 0
    }

    private struct State {
        var hosts: [String: Host] = [:]
        var waiters: [UInt64: Waiter] = [:]
        /// Waiters by deadline (ids of waiters gone since are skipped).
        var deadlines = DeadlineHeap()
        var sequence: UInt64 = 0
        var wakeAt = Double.infinity
        var generation: UInt64 = 0
        var stats = Stats()
    }

    public let limit: Int
    private let clock: @Sendable () -> Double
    private let state = Locked(State())
    private let ids = Atomic<UInt64>(0)

    public init(limit: Int, clock: @escaping @Sendable () -> Double) {
        self.limit = max(1, limit)
        self.clock = clock
    }

    public var stats: Stats {
        state.withLock { s in
            var out = s.stats
            out.waiting = s.waiters.count
            return out
        }
    }

    /// A slot on `host` now, or after a fair wait until `deadline`. Each granted slot is
    /// given back with `release(host)`.
    public func acquire(host: String, client: ClientKey?, deadline: Double) async -> Outcome {
        let id = ids.add(1, ordering: .relaxed).newValue
        let owner = client.map(Owner.client) ?? .background
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                var sweep: UInt64?
                let immediate = state.withLock { s -> Outcome? in
                    var h = s.hosts[host] ?? Host()
                    if h.active < limit, h.waiting == 0 {
                        h.active += 1
                        s.hosts[host] = h
                        return .granted(waited: 0)
                    }
                    let now = clock()
                    if Task.isCancelled { return .cancelled }
                    guard deadline > now else {
                        s.stats.waitsTimedOut += 1
                        return .timedOut
                    }
                    s.sequence &+= 1
                    h.queues[owner, default: []].append(id)
                    h.waiting += 1
                    s.hosts[host] = h
                    s.waiters[id] = Waiter(
                        id: id, host: host, owner: owner, sequence: s.sequence, enqueued: now, deadline: deadline, continuation: continuation)
                    s.deadlines.push(deadline, id)
                    if deadline < s.wakeAt {
                        s.wakeAt = deadline
                        s.generation &+= 1
                        sweep = s.generation
                    }
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
                if let sweep { launchSweep(sweep) }
            }
        } onCancel: {
            let waiter = state.withLock { s in remove(id, in: &s) }
            waiter?.continuation.resume(returning: .cancelled)
        }
    }

    /// Gives a slot back: the next waiter in the round gets it.
    public func release(host: String) {
        let next = state.withLock { s -> (CheckedContinuation<Outcome, Never>, Double)? in
            guard var h = s.hosts[host] else { return nil }
            h.active = max(0, h.active - 1)
            s.hosts[host] = h
            guard let owner = Self.nextOwner(in: h, s.waiters), let id = h.queues[owner]?.first, let waiter = remove(id, in: &s),
                var granted = s.hosts[host] ?? Optional(Host())
            else {
                if h.active == 0, h.waiting == 0 { s.hosts[host] = nil }
                return nil
            }
            granted.active += 1
            if granted.waiting > 0 {
                granted.grants &+= 1
                granted.lastGrant[owner] = granted.grants
            }
            s.hosts[host] = granted
            let waited = clock() - waiter.enqueued
            s.stats.waitsGranted += 1
            s.stats.waitSeconds += waited
            return (waiter.continuation, waited)
        }
        if let (continuation, waited) = next { continuation.resume(returning: .granted(waited: waited)) }
    }

    /// The waiting owner served least recently; FIFO among equals.
    private static func nextOwner(in h: Host, _ waiters: [UInt64: Waiter]) -> Owner? {
        var best: (owner: Owner, grant: UInt64, sequence: UInt64)?
        for (owner, queue) in h.queues {
            guard let head = queue.first, let waiter = waiters[head] else { continue }
            let grant = h.lastGrant[owner] ?? 0
            if let b = best, (b.grant, b.sequence) <= (grant, waiter.sequence) { continue }
            best = (owner, grant, waiter.sequence)
        }
        return best?.owner
    }

    private func remove(_ id: UInt64, in s: inout State) -> Waiter? {
        guard let waiter = s.waiters.removeValue(forKey: id), var h = s.hosts[waiter.host] else { return nil }
        if var queue = h.queues[waiter.owner], let index = queue.firstIndex(of: id) {
            queue.remove(at: index)
            h.queues[waiter.owner] = queue.isEmpty ? nil : queue
        }
        h.waiting -= 1
        if h.waiting == 0 { h.lastGrant = [:] }
        s.hosts[waiter.host] = h.active == 0 && h.waiting == 0 ? nil : h
        return waiter
    }

    /// Expires waiters at their deadlines (one sweep task per generation).
    private func launchSweep(_ generation: UInt64) {
        Task { [self] in
            while true {
                var expired: [CheckedContinuation<Outcome, Never>] = []
                let sleep = state.withLock { s -> Double? in
                    guard s.generation == generation else { return nil }
                    let now = clock()
                    while let (deadline, id) = s.deadlines.top, deadline <= now {
                        s.deadlines.pop()
                        if let removed = remove(id, in: &s) {
                            s.stats.waitsTimedOut += 1
                            expired.append(removed.continuation)
                        }
                    }
                    if s.waiters.isEmpty { s.deadlines = DeadlineHeap() }
                    s.wakeAt = s.deadlines.top?.deadline ?? .infinity
                    return s.wakeAt.isFinite ? max(0.001, s.wakeAt - now) : nil
                }
                for continuation in expired { continuation.resume(returning: .timedOut) }
                guard let sleep else { return }
                try? await Task.sleep(for: .milliseconds(Saturating.int((sleep * 1000).rounded(.up), in: 1...Int(Int32.max))))
            }
        }
    }
}

/// A binary min-heap of (deadline, id).
struct DeadlineHeap {
    private var items: [(deadline: Double, id: UInt64)] = []

    var top: (deadline: Double, id: UInt64)? { items.first }

    mutating func push(_ deadline: Double, _ id: UInt64) {
        items.append((deadline, id))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].deadline < items[parent].deadline else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func pop() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var i = 0
        while true {
            let left = 2 * i + 1, right = left + 1
            var smallest = i
            if left < items.count, items[left].deadline < items[smallest].deadline { smallest = left }
            if right < items.count, items[right].deadline < items[smallest].deadline { smallest = right }
            guard smallest != i else { return }
            items.swapAt(i, smallest)
            i = smallest
        }
    }
}
