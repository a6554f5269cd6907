import CHiredis
import Glibc
import Primitives
import Synchronization

/// One pipelined Redis connection owned by its own thread (the shape of the libcurl
/// driver): callers enqueue commands and await replies; the thread sends everything
/// queued in one write and reads the replies, with a deadline per command. Nothing
/// here ever blocks an event loop, and every failure is a `RedisFailure`, never a crash.
///
/// While Redis is down, commands fail at once with `.unavailable` and the thread
/// reconnects with jittered backoff (up to 2 s; 0.5 s through Sentinel, where a failover
/// brings a new primary within seconds and each attempt only asks the sentinels). A stopped Redis still accepts TCP
/// connections, so only the command deadline detects it.
public final class RedisConnection: Sendable {
    public struct Settings: Sendable {
        public var endpoint: RedisEndpoint
        public var commandTimeoutMs = 25
        /// How long the connection waits for a reply before it takes the server for stopped and
        /// reconnects (nil: 20 × `commandTimeoutMs`, at least 500 ms). A reply later than a
        /// command's deadline fails only that command: under load (a busy machine, a busy
        /// Redis) replies come late but come, and the connection stays.
        public var stallTimeoutMs: Int?
        public var connectTimeoutMs = 100
        /// Lua scripts loaded (SCRIPT LOAD) on every connect; run with `script(_:keys:args:)`.
        public var scripts: [String] = []
        public var maxQueued = 10_000
        /// The most one reply may take on the wire; a larger one drops the connection.
        public var maxReplyBytes = 8 << 20
        /// Sentinels that know the primary of `masterName`; empty: connect to `endpoint` itself.
        /// With them, only `endpoint`'s credentials and database are used.
        public var sentinels: [RedisAddress] = []
        public var masterName = ""
        public var sentinelPassword: String?
        /// How often, while connected, a sentinel is asked whether the primary moved.
        public var sentinelCheckSeconds = 1.0

        public init(endpoint: RedisEndpoint) { self.endpoint = endpoint }
    }

    /// Told about each command (operation name, outcome) and each change of up/down.
    public typealias Observer = @Sendable (_ event: Event) -> Void
    public enum Event: Sendable {
        case command(operation: String, outcome: String)
        case state(up: Bool, reason: String)
        /// A command's round trip, as its caller saw it.
        case latency(operation: String, seconds: Double)
        /// Connected again after having been connected before.
        case reconnected
        /// The primary moved (Sentinel said so, or a READONLY/LOADING/MASTERDOWN reply).
        case failover(from: String, to: String)
        /// `maxmemory-policy` as `CONFIG GET` reported it on connect; nil when refused.
        case evictionPolicy(String?)
    }

    private struct Pending: Sendable {
        let args: [[UInt8]]
        let operation: String
        let deadline: Double
        let reply: @Sendable (Result<RedisValue, RedisFailure>) -> Void
    }

    private let settings: Settings
    private let observer: Observer?
    private let queue = Locked<[Pending]>([])
    private let wake = WakeSignal()
    private let up = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    /// The reason last reported while down (nil while up).
    private let downReason = Locked<String?>(nil)
    /// SHA1s of `settings.scripts`, as SCRIPT LOAD answered on the current connection.
    private let shas = Locked<[String]>([])
    /// The primary connected to (its address as Sentinel gave it, or the endpoint's).
    private let currentPrimary = Locked<RedisAddress?>(nil)
    /// Tests only: the connection thread drops commands unanswered, as a bug would, to
    /// prove the caller-side deadline holds whatever the thread or hiredis does.
    let losesRepliesForTesting = Atomic<Bool>(false)
    /// How long past its own deadline a caller waits for the connection thread at most.
    static let callerSlackMs = 2
    /// When the thread last read a reply, and a caller last gave up waiting for one (monotonic
    /// seconds, as bit patterns): a timeout with no reply since means the server stopped
    /// answering, and commands fail at once until one comes.
    private let lastReply = Atomic<UInt64>(0)
    private let lastTimeout = Atomic<UInt64>(0)

    public init(settings: Settings, observer: Observer? = nil) {
        self.settings = settings
        self.observer = observer
        _ = NativeThread.start(name: "redis") { [self] in run() }
    }

    public var isUp: Bool { up.load(ordering: .relaxed) }

    /// Up, and not silent since a command timed out: what a caller that would rather wait for
    /// Redis than work around it asks. Silent, commands fail at once for a command's deadline
    /// after each timeout; then the next one goes through and finds out.
    public var isAnswering: Bool {
        guard isUp else { return false }
        let reply = Double(bitPattern: lastReply.load(ordering: .relaxed)), timeout = Double(bitPattern: lastTimeout.load(ordering: .relaxed))
        return !(timeout > reply && Self.now() - timeout < Double(settings.commandTimeoutMs) / 1000)
    }

    /// Whether a reply was read since the last command (a request's) timed out: the sign that a
    /// server past a deadline is busy, not stopped. `isAnswering` without its one-deadline window.
    public var hasRepliedSinceTimeout: Bool {
        Double(bitPattern: lastReply.load(ordering: .relaxed)) >= Double(bitPattern: lastTimeout.load(ordering: .relaxed))
    }

    private var stallMs: Int { settings.stallTimeoutMs ?? max(500, 20 * settings.commandTimeoutMs) }

    public func stop() {
        stopped.store(true, ordering: .relaxed)
        wake.signal()
    }

    /// Sends one command; `operation` names it in metrics (e.g. "get", "lock") and in its
    /// client span (OpenTelemetry's database conventions) when the request is traced.
    /// `patient`: for work nobody waits on, which may wait out a busy server: its deadline is
    /// the stall timeout, and it is sent even while the server is silent.
    public func command(_ args: [[UInt8]], operation: String, patient: Bool = false) async -> Result<RedisValue, RedisFailure> {
        await TraceScope.span(operation, kind: .client, [("db.system.name", .string("redis")), ("db.operation.name", .string(operation))]) { notes in
            let result = await send(args, operation: operation, patient: patient)
            if case .failure(let failure) = result {
                notes.set("error.type", .string(failure.outcome))
                notes.error = failure.outcome
            }
            return result
        }
    }

    private func send(_ args: [[UInt8]], operation: String, patient: Bool) async -> Result<RedisValue, RedisFailure> {
        guard patient ? isUp : isAnswering else {
            observer?(.command(operation: operation, outcome: "unavailable"))
            return .failure(.unavailable)
        }
        let began = Self.now()
        let timeoutMs = patient ? stallMs : settings.commandTimeoutMs
        let deadline = began + Double(timeoutMs) / 1000
        let waitMs = timeoutMs + Self.callerSlackMs
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<RedisValue, RedisFailure>, Never>) in
            let once = ReplyOnce(c)
            let accepted = queue.withLock { q -> Bool in
                // Checked under the lock the final failAll takes: nothing queued after it is left waiting.
                guard q.count < settings.maxQueued, !stopped.load(ordering: .relaxed) else { return false }
                q.append(Pending(args: args, operation: operation, deadline: deadline, reply: { once.resume($0) }))
                return true
            }
            guard accepted else {
                once.resume(.failure(.unavailable))
                return
            }
            wake.signal()
            // The caller's own deadline: answered in time whatever the connection thread
            // or hiredis does with the command (a lost reply would hang every joined flight).
            once.timer = Task { [self] in
                try? await Task.sleep(for: .milliseconds(waitMs))
                if once.resume(.failure(.timeout)), !patient { lastTimeout.store(Self.now().bitPattern, ordering: .relaxed) }
            }
        }
        observer?(.latency(operation: operation, seconds: Self.now() - began))
        switch result {
        case .success(.error(let message)):
            observer?(.command(operation: operation, outcome: "error"))
            return .failure(.error(message))
        case .success(let value):
            observer?(.command(operation: operation, outcome: "ok"))
            return .success(value)
        case .failure(let failure):
            observer?(.command(operation: operation, outcome: failure.outcome))
            return .failure(failure)
        }
    }

    public func command(_ args: [String], operation: String, patient: Bool = false) async -> Result<RedisValue, RedisFailure> {
        await command(args.map { Array($0.utf8) }, operation: operation, patient: patient)
    }

    /// Runs loaded script `index` by SHA; a server that lost its scripts (NOSCRIPT, e.g.
    /// after SCRIPT FLUSH) gets the source once with EVAL instead.
    public func script(_ index: Int, keys: [[UInt8]], args: [[UInt8]], operation: String, patient: Bool = false) async -> Result<RedisValue, RedisFailure> {
        guard index >= 0, index < settings.scripts.count else { return .failure(.error("no such script")) }
        let sha = shas.withLock { index < $0.count ? $0[index] : "" }
        let tail = [Array(String(keys.count).utf8)] + keys + args
        if !sha.isEmpty {
            let result = await command([Array("EVALSHA".utf8), Array(sha.utf8)] + tail, operation: operation, patient: patient)
            guard case .failure(.error(let message)) = result, message.hasPrefix("NOSCRIPT") else { return result }
        }
        return await command([Array("EVAL".utf8), Array(settings.scripts[index].utf8)] + tail, operation: operation, patient: patient)
    }

    // MARK: the connection thread

    private func run() {
        var context: UnsafeMutablePointer<redisContext>?
        var backoff = 0.05
        var nextAttempt = 0.0
        var lastTraffic = Self.now()
        var lastSentinelCheck = Self.now()
        var everConnected = false
        // A managed endpoint answered READONLY/LOADING/MASTERDOWN and has not taken a write since.
        var steppedDown = false
        while !stopped.load(ordering: .relaxed) {
            if context == nil {
                failAll(.unavailable)
                let now = Self.now()
                if now < nextAttempt {
                    wake.wait(timeout: min(0.25, nextAttempt - now))
                    continue
                }
                switch connect(afterStepDown: steppedDown) {
                case .success(let c):
                    steppedDown = false
                    context = c
                    backoff = 0.05
                    lastTraffic = Self.now()
                    lastSentinelCheck = lastTraffic
                    if everConnected { observer?(.reconnected) }
                    everConnected = true
                    setUp(true, reason: "connected")
                case .failure(let failure):
                    // Jitter spreads the replicas' reconnects after a Redis restart.
                    nextAttempt = Self.now() + backoff * Double.random(in: 0.5...1.0)
                    backoff = min(backoff * 2, settings.sentinels.isEmpty ? 2.0 : 0.5)
                    setUp(false, reason: failure.reason)
                    continue
                }
            }
            guard let c = context else { continue }
            // With Sentinel: follow a primary that moved while this connection still works
            // (a failover the old primary survived, reachable but now a replica).
            if !settings.sentinels.isEmpty, Self.now() - lastSentinelCheck >= settings.sentinelCheckSeconds {
                lastSentinelCheck = Self.now()
                if let primary = discoverPrimary(), let current = currentPrimary.withLock({ $0 }), primary != current {
                    // Counted once, by the connect that reaches the new primary.
                    redisFree(c)
                    context = nil
                    nextAttempt = 0
                    setUp(false, reason: "primary moved to \(primary)")
                    continue
                }
            }
            var batch = queue.withLock { q -> [Pending] in
                defer { q.removeAll(keepingCapacity: true) }
                return q
            }
            if batch.isEmpty {
                // Idle: a PING now and then, so a dead or stopped server shows as down without traffic.
                if Self.now() - lastTraffic >= 1 {
                    batch = [
                        Pending(args: [Array("PING".utf8)], operation: "ping", deadline: Self.now() + Double(settings.commandTimeoutMs) / 1000, reply: { _ in })
                    ]
                } else {
                    wake.wait(timeout: 0.25)
                    continue
                }
            }
            lastTraffic = Self.now()
            if let failure = exchange(batch, on: c) {
                redisFree(c)
                context = nil
                // A primary that stepped down answers at once: reconnect (and re-resolve) now.
                let moved = Self.primaryMoved(failure)
                // Counted by the connect that reaches a primary again (see `connect`).
                if moved { steppedDown = true }
                nextAttempt = moved ? 0 : Self.now() + backoff * Double.random(in: 0.5...1.0)
                setUp(false, reason: failure)
            }
        }
        if let c = context { redisFree(c) }
        setUp(false, reason: "stopped")
        failAll(.unavailable)
    }

    /// Pipelines the batch; on a broken connection fails what is left and says why.
    private func exchange(_ batch: [Pending], on c: UnsafeMutablePointer<redisContext>) -> String? {
        let now = Self.now()
        var sent: [Pending] = []
        sent.reserveCapacity(batch.count)
        for (index, p) in batch.enumerated() {
            if losesRepliesForTesting.load(ordering: .relaxed) { continue }
            // Waited past its deadline behind a slow batch: answer now, send nothing.
            guard p.deadline > now else {
                p.reply(.failure(.timeout))
                continue
            }
            guard Self.append(p.args, to: c) else {
                // Every caller of the batch is answered: the ones sent, this one, the rest.
                for q in sent + batch[index...] { q.reply(.failure(.unavailable)) }
                return "write failed"
            }
            sent.append(p)
        }
        var movedReason: String?
        for (i, p) in sent.enumerated() {
            var raw: UnsafeMutableRawPointer?
            if chiredis_get_reply(c, &raw, settings.maxReplyBytes) != REDIS_OK || raw == nil {
                let timedOut = c.pointee.err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK)
                for q in sent[i...] { q.reply(.failure(timedOut ? .timeout : .unavailable)) }
                return timedOut ? "command timed out" : "connection lost"
            }
            guard let reply = raw?.assumingMemoryBound(to: redisReply.self) else {
                p.reply(.failure(.unavailable))
                continue
            }
            let value = RedisValue(reply: reply)
            freeReplyObject(raw)
            lastReply.store(Self.now().bitPattern, ordering: .relaxed)
            if case .error(let message) = value, Self.primaryMoved(message), movedReason == nil { movedReason = message }
            p.reply(.success(value))
        }
        return movedReason
    }

    /// Replies that mean this server is no longer (or not yet) the writable primary.
    static func primaryMoved(_ reason: String) -> Bool {
        reason.hasPrefix("READONLY") || reason.hasPrefix("LOADING") || reason.hasPrefix("MASTERDOWN")
    }

    private static func append(_ args: [[UInt8]], to c: UnsafeMutablePointer<redisContext>) -> Bool {
        // One contiguous copy of the arguments; hiredis copies them again into its
        // output buffer during the call, so nothing has to outlive it.
        let joined: [UInt8] = Array(args.joined()) + [0]  // never empty, so it always has an address
        var offsets: [Int] = []
        offsets.reserveCapacity(args.count)
        var offset = 0
        for arg in args {
            offsets.append(offset)
            offset += arg.count
        }
        let lengths = args.map(\.count)
        return joined.withUnsafeBufferPointer { bytes in
            guard let start = bytes.baseAddress else { return false }
            let base = UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self)
            var pointers: [UnsafePointer<CChar>?] = offsets.map { base + $0 }
            return pointers.withUnsafeMutableBufferPointer { p in
                lengths.withUnsafeBufferPointer { l in redisAppendCommandArgv(c, Int32(args.count), p.baseAddress, l.baseAddress) == REDIS_OK }
            }
        }
    }

    /// A ready connection to a primary, or why there is none (logged with "redis down").
    /// Reaching a primary other than the last one connected to (Sentinel named a new address),
    /// or the same name again after it stepped down (a managed endpoint), is one failover:
    /// counted here whichever path led to it (the periodic check, a dropped connection, a
    /// READONLY reply), so a change is never counted twice nor missed.
    private func connect(afterStepDown: Bool) -> Result<UnsafeMutablePointer<redisContext>, ConnectFailure> {
        let e = settings.endpoint
        var target = RedisAddress(host: e.host, port: e.port)
        if !settings.sentinels.isEmpty {
            guard let primary = discoverPrimary() else {
                return .failure(
                    ConnectFailure(
                        reason: "no sentinel (\(settings.sentinels.map(\.description).joined(separator: ", "))) named a primary for \(settings.masterName)"))
            }
            target = primary
        }
        // hiredis resolves the name on every connect: a managed endpoint that moves is followed.
        guard let c = chiredis_connect(target.host, Int32(target.port), Int32(settings.connectTimeoutMs), Int32(stallMs)) else {
            return .failure(ConnectFailure(reason: "cannot allocate a connection"))
        }
        guard c.pointee.err == 0 else {
            let reason = Self.errorText(c)
            redisFree(c)
            return .failure(ConnectFailure(reason: reason))
        }
        // Handshake: AUTH, SELECT, and the scripts (a restarted Redis has none).
        var setup: [[String]] = []
        if let password = e.password { setup.append(e.username.map { ["AUTH", $0, password] } ?? ["AUTH", password]) }
        if e.database != 0 { setup.append(["SELECT", String(e.database)]) }
        for source in settings.scripts { setup.append(["SCRIPT", "LOAD", source]) }
        // A server that is not (yet) the primary is not connected to: through Sentinel always, and
        // through a managed endpoint's name after it stepped down (its DNS may lag the failover;
        // one that refuses ROLE is taken as it is).
        if !settings.sentinels.isEmpty || afterStepDown { setup.append(["ROLE"]) }
        var loaded: [String] = []
        for command in setup {
            guard Self.append(command.map { Array($0.utf8) }, to: c) else {
                redisFree(c)
                return .failure(ConnectFailure(reason: "cannot queue the handshake"))
            }
        }
        for command in setup {
            var raw: UnsafeMutableRawPointer?
            guard chiredis_get_reply(c, &raw, Self.setupReplyBytes) == REDIS_OK, let reply = raw?.assumingMemoryBound(to: redisReply.self) else {
                let reason = Self.errorText(c)
                redisFree(c)
                return .failure(ConnectFailure(reason: reason))
            }
            let value = RedisValue(reply: reply)
            freeReplyObject(raw)
            if case .error = value, command.first == "ROLE", settings.sentinels.isEmpty { continue }
            if case .error(let message) = value {
                redisFree(c)
                // AUTH or SELECT refused (a wrong password must not read as an outage).
                return .failure(ConnectFailure(reason: "\(command[0]) refused: \(message)"))
            }
            if command.first == "SCRIPT", let sha = value.bytes { loaded.append(String(decoding: sha, as: UTF8.self)) }
            if command.first == "ROLE", !Self.isPrimary(role: value, strict: !settings.sentinels.isEmpty) {
                redisFree(c)
                return .failure(ConnectFailure(reason: "\(target) is not the primary (yet): failover in progress"))
            }
        }
        shas.withLock { $0 = loaded }
        let previous = currentPrimary.withLock { p in
            defer { p = target }
            return p
        }
        if let previous, previous != target || afterStepDown {
            observer?(.failover(from: previous.description, to: target.description))
        }
        observer?(.evictionPolicy(Self.evictionPolicy(c)))
        return .success(c)
    }

    /// ROLE's answer names a primary; `strict` (Sentinel) takes nothing else, otherwise only a
    /// server that says it is something else is refused.
    static func isPrimary(role: RedisValue, strict: Bool) -> Bool {
        guard let name = role.elements?.first?.bytes.map({ String(decoding: $0, as: UTF8.self) }) else { return !strict }
        return name == "master"
    }

    /// `CONFIG GET maxmemory-policy`; nil when the server refuses it (managed services often do).
    private static func evictionPolicy(_ c: UnsafeMutablePointer<redisContext>) -> String? {
        guard append(["CONFIG", "GET", "maxmemory-policy"].map { Array($0.utf8) }, to: c) else { return nil }
        var raw: UnsafeMutableRawPointer?
        guard chiredis_get_reply(c, &raw, Self.setupReplyBytes) == REDIS_OK, let reply = raw?.assumingMemoryBound(to: redisReply.self) else { return nil }
        let value = RedisValue(reply: reply)
        freeReplyObject(raw)
        guard let fields = value.elements, fields.count == 2, let policy = fields[1].bytes else { return nil }
        return String(decoding: policy, as: UTF8.self)
    }

    /// Asks the sentinels, in turn, where the primary of `masterName` is.
    private func discoverPrimary() -> RedisAddress? {
        for sentinel in settings.sentinels {
            guard let c = chiredis_connect(sentinel.host, Int32(sentinel.port), Int32(settings.connectTimeoutMs), Int32(settings.commandTimeoutMs)) else {
                continue
            }
            defer { redisFree(c) }
            guard c.pointee.err == 0 else { continue }
            var commands: [[String]] = []
            if let password = settings.sentinelPassword { commands.append(["AUTH", password]) }
            commands.append(["SENTINEL", "get-master-addr-by-name", settings.masterName])
            var answer: RedisValue?
            for command in commands {
                guard Self.append(command.map { Array($0.utf8) }, to: c) else { break }
                var raw: UnsafeMutableRawPointer?
                guard chiredis_get_reply(c, &raw, Self.setupReplyBytes) == REDIS_OK, let reply = raw?.assumingMemoryBound(to: redisReply.self) else { break }
                answer = RedisValue(reply: reply)
                freeReplyObject(raw)
                if case .error = answer { break }
            }
            guard let fields = answer?.elements, fields.count == 2, let host = fields[0].bytes, let port = fields[1].int, (1...65535).contains(port)
            else { continue }
            return RedisAddress(host: String(decoding: host, as: UTF8.self), port: port)
        }
        return nil
    }

    struct ConnectFailure: Error {
        let reason: String
    }

    /// hiredis' own words for the last error ("Connection refused"), bounded by its buffer.
    private static func errorText(_ c: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: c.pointee.errstr) { raw in
            let text = raw.prefix { $0 != 0 }
            return text.isEmpty ? "connection failed" : String(decoding: text, as: UTF8.self)
        }
    }

    private func failAll(_ failure: RedisFailure) {
        let pending = queue.withLock { q -> [Pending] in
            defer { q.removeAll() }
            return q
        }
        for p in pending { p.reply(.failure(failure)) }
    }

    private func setUp(_ value: Bool, reason: String) {
        // A new connection has answered its handshake.
        if value { lastReply.store(Self.now().bitPattern, ordering: .relaxed) }
        // Logged and counted once per change of state (or of why it is down: a wrong password
        // at startup is reported, not only a connection that was up and went), not per failed command.
        let changed = up.exchange(value, ordering: .relaxed) != value
        let newReason = downReason.withLock { last in
            defer { last = value ? nil : reason }
            return !value && last != reason
        }
        if changed || newReason { observer?(.state(up: value, reason: reason)) }
    }

    static func now() -> Double { NativeThread.monotonicSeconds() }

    /// Replies to the connection's own setup, sentinel and policy questions are short.
    static let setupReplyBytes = 64 << 10
}

/// A continuation resumed exactly once, by the reply or by the caller's timer, whichever
/// comes first; the timer is cancelled when the reply wins.
private final class ReplyOnce: Sendable {
    private let continuation: CheckedContinuation<Result<RedisValue, RedisFailure>, Never>
    private let done = Atomic<Bool>(false)
    private let timerBox = Locked<Task<Void, Never>?>(nil)

    init(_ continuation: CheckedContinuation<Result<RedisValue, RedisFailure>, Never>) { self.continuation = continuation }

    var timer: Task<Void, Never>? {
        get { timerBox.withLock { $0 } }
        set {
            timerBox.withLock { $0 = newValue }
            if done.load(ordering: .acquiring) { newValue?.cancel() }
        }
    }

    /// True when this resumed the caller (false: it had been answered already).
    @discardableResult
    func resume(_ result: Result<RedisValue, RedisFailure>) -> Bool {
        guard done.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return false }
        timerBox.withLock { $0 }?.cancel()
        continuation.resume(returning: result)
        return true
    }
}
