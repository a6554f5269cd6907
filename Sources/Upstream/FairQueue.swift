import Primitives
import Synchronization

/// One upstream's waiting room in front of its `TokenSource`, per replica.
///
/// With tokens to spare and nobody waiting, a request takes one at once. Otherwise it
/// queues (bounded per client) for up to its wait limit, and tokens are handed out
/// round-robin across clients: the waiting client served least recently goes next, so a
/// client with 50 queued misses and a client with one alternate. A client with nothing
/// granted lately (or ever) goes before one that was just served.
public final class FairQueue: Sendable {
    public struct Settings: Sendable {
        /// Waiters one client may have queued at once.
        public var perClient: Int
        /// Waiters in total (all clients) before new ones are refused.
        public var maxWaiters: Int
        /// Recent grants remembered for the round-robin order (bounded memory).
        public var grantMemory: Int

        public init(perClient: Int = 4, maxWaiters: Int = 4096, grantMemory: Int = 1024) {
            self.perClient = perClient
            self.maxWaiters = maxWaiters
            self.grantMemory = grantMemory
        }
    }

    /// Why a request got no token.
    public enum Rejection: String, Sendable {
        /// No client identity, or waiting is off: the bucket alone decided (as before the queue).
        case noToken = "no_token"
        /// The client already has its share of waiters queued (or the queue is full).
        case queueFull = "queue_full"
        /// Even alone, the client's turn would come after its wait limit.
        case waitLimit = "wait_limit"
        /// Waited the whole limit without its turn coming.
        case timeout = "queue_timeout"
        /// The caller went away (its client disconnected) while it waited.
        case cancelled
    }

    public enum Outcome: Sendable, Equatable {
        case granted(waited: Double)
        case rejected(Rejection, retryAfter: Double)
    }

    /// Counters for `/metrics`.
    public struct Stats: Sendable, Equatable {
        public var depth = 0
        /// Requests that queued and then got a token.
        public var waitsGranted = 0
        public var waitsTimedOut = 0
        public var waitsCancelled = 0
        public var waitSeconds = 0.0
        /// Refusals by reason (`no_token`, `queue_full`, `wait_limit`, `queue_timeout`).
        public var rejected: [String: Int] = [:]
    }

    private struct Waiter {
        let id: UInt64
        /// Arrival order, for FIFO among clients with equal standing.
        let sequence: UInt64
        let enqueued: Double
        let deadline: Double
        let continuation: CheckedContinuation<Outcome, Never>
    }

    private struct State {
        var clients: [ClientKey: [Waiter]] = [:]
        var waiterClient: [UInt64: ClientKey] = [:]
        var total = 0
        var sequence: UInt64 = 0
        /// Grant number per recently served client; 0 (absent) sorts first.
        var lastGrant: [ClientKey: UInt64] = [:]
        var grantLog: [(ClientKey, UInt64)] = []
        var grantLogHead = 0
        var grants: UInt64 = 0
        /// When the current pump wakes next; only the pump of `generation` keeps running.
        var wakeAt = Double.infinity
        var pumping = false
        var generation: UInt64 = 0
        var nextTokenAt = 0.0
        var stats = Stats()
    }

    public let source: any TokenSource
    public let settings: Settings
    private let clock: @Sendable () -> Double
    private let state = Locked(State())
    private let ids = Atomic<UInt64>(0)

    public init(source: any TokenSource, settings: Settings = Settings(), clock: @escaping @Sendable () -> Double) {
        self.source = source
        self.settings = settings
        self.clock = clock
    }

    public var stats: Stats {
        state.withLock { s in
            var out = s.stats
            out.depth = s.total
            return out
        }
    }

    /// A token now, a token after a fair wait of at most `maxWait` seconds, or a refusal
    /// with the seconds after which trying again makes sense. `client` nil (background
    /// work) or `maxWait` 0 never waits, and never takes a token ahead of waiting clients.
    /// Only a waiter's own cancellation takes it out early: a client key may be many people
    /// (one address behind NAT), so no request of one key replaces another.
    public func acquire(client: ClientKey?, maxWait: Double) async -> Outcome {
        let id = ids.add(1, ordering: .relaxed).newValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                var startPump: UInt64?
                let immediate = state.withLock { s -> Outcome? in
                    let now = clock()
                    var retryAfter: Double
                    if s.total == 0 {
                        let grant = source.take(now: now)
                        if grant.granted {
                            if let client { recordGrant(client, in: &s) }
                            return .granted(waited: 0)
                        }
                        retryAfter = grant.retryAfter
                    } else {
                        retryAfter = max(0, s.nextTokenAt - now)
                    }
                    guard let client, maxWait > 0, !Task.isCancelled else { return reject(.noToken, retryAfter, in: &s) }
                    let own = s.clients[client]?.count ?? 0
                    guard own < settings.perClient, s.total < settings.maxWaiters else {
                        return reject(.queueFull, retryAfter + Double(own) / source.perSecond, in: &s)
                    }
                    // Refused at once only when even the next token comes too late. The client's own
                    // earlier waiters are not counted: an app's aborted keystroke leaves moments
                    // after its successor arrives (the close may reach the loop just after the new
                    // request), and one that stays only costs this one its deadline.
                    guard retryAfter <= maxWait else { return reject(.waitLimit, retryAfter, in: &s) }
                    s.sequence &+= 1
                    let deadline = now + maxWait
                    s.clients[client, default: []]
                        .append(Waiter(id: id, sequence: s.sequence, enqueued: now, deadline: deadline, continuation: continuation))
                    s.waiterClient[id] = client
                    s.total += 1
                    if s.total == 1 { s.nextTokenAt = now + retryAfter }
                    if !s.pumping || deadline < s.wakeAt {
                        s.pumping = true
                        s.generation &+= 1
                        s.wakeAt = min(s.nextTokenAt, deadline)
                        startPump = s.generation
                    }
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
                if let startPump { launchPump(startPump) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> Waiter? in
                guard let waiter = remove(id, in: &s) else { return nil }
                s.stats.waitsCancelled += 1
                return waiter
            }
            waiter?.continuation.resume(returning: .rejected(.cancelled, retryAfter: 0))
        }
    }

    /// Starts the task that hands out tokens and expires waiters (one per generation).
    private func launchPump(_ generation: UInt64) {
        Task { [self] in await pump(generation) }
    }

    private func pump(_ generation: UInt64) async {
        while true {
            var resumes: [(CheckedContinuation<Outcome, Never>, Outcome)] = []
            let sleep = state.withLock { s -> Double? in
                guard s.generation == generation else { return nil }
                let now = clock()
                // Tokens first: a waiter whose turn and deadline coincide is served.
                while s.total > 0 {
                    let grant = source.take(now: now)
                    guard grant.granted else {
                        s.nextTokenAt = now + grant.retryAfter
                        break
                    }
                    guard let client = nextClient(in: s), let waiter = s.clients[client]?.first, let removed = remove(waiter.id, in: &s) else { break }
                    recordGrant(client, in: &s)
                    s.stats.waitsGranted += 1
                    s.stats.waitSeconds += now - removed.enqueued
                    resumes.append((removed.continuation, .granted(waited: now - removed.enqueued)))
                }
                var earliest = Double.infinity
                for (_, waiters) in s.clients {
                    for w in waiters where w.deadline <= now {
                        if let removed = remove(w.id, in: &s) {
                            s.stats.waitsTimedOut += 1
                            s.stats.rejected[Rejection.timeout.rawValue, default: 0] += 1
                            resumes.append((removed.continuation, .rejected(.timeout, retryAfter: max(1, s.nextTokenAt - now))))
                        }
                    }
                }
                for (_, waiters) in s.clients { for w in waiters { earliest = min(earliest, w.deadline) } }
                if s.total == 0 {
                    s.pumping = false
                    s.wakeAt = .infinity
                    return nil
                }
                s.wakeAt = min(s.nextTokenAt, earliest)
                return max(0.001, s.wakeAt - now)
            }
            for (continuation, outcome) in resumes { continuation.resume(returning: outcome) }
            guard let sleep else { return }
            try? await Task.sleep(for: .milliseconds(Saturating.int((sleep * 1000).rounded(.up), in: 1...Int(Int32.max))))
        }
    }

    /// The waiting client served least recently; FIFO among equals.
    private func nextClient(in s: State) -> ClientKey? {
        var best: (key: ClientKey, grant: UInt64, sequence: UInt64)?
        for (key, waiters) in s.clients {
            guard let head = waiters.first else { continue }
            let grant = s.lastGrant[key] ?? 0
            if let b = best, (b.grant, b.sequence) <= (grant, head.sequence) { continue }
            best = (key, grant, head.sequence)
        }
        return best?.key
    }

    private func recordGrant(_ client: ClientKey, in s: inout State) {
        s.grants &+= 1
        s.lastGrant[client] = s.grants
        guard settings.grantMemory > 0 else { return }
        if s.grantLog.count < settings.grantMemory {
            s.grantLog.append((client, s.grants))
            return
        }
        // Forget the oldest grant unless that client was served again since.
        let (old, number) = s.grantLog[s.grantLogHead]
        if s.lastGrant[old] == number { s.lastGrant[old] = nil }
        s.grantLog[s.grantLogHead] = (client, s.grants)
        s.grantLogHead = (s.grantLogHead + 1) % settings.grantMemory
    }

    private func remove(_ id: UInt64, in s: inout State) -> Waiter? {
        guard let client = s.waiterClient.removeValue(forKey: id), var waiters = s.clients[client],
            let index = waiters.firstIndex(where: { $0.id == id })
        else { return nil }
        let waiter = waiters.remove(at: index)
        s.clients[client] = waiters.isEmpty ? nil : waiters
        s.total -= 1
        return waiter
    }

    private func reject(_ reason: Rejection, _ retryAfter: Double, in s: inout State) -> Outcome {
        s.stats.rejected[reason.rawValue, default: 0] += 1
        return .rejected(reason, retryAfter: max(retryAfter, 0))
    }
}
