import Primitives

/// Concurrent resizes of one source share its decode: a resize asked while another of the
/// same source waits for a decoder joins it (up to `maxPerDecode`), and the one decode makes
/// every width and encoding asked (`ImageTranscoder.transcode(_:_:limits:)`). A resize asked
/// once that decode has started waits for the next: the decoders never wait to gather work.
public final class SharedDecodes: Sendable {
    private struct Waiter {
        let request: ImageRequest
        let done: CheckedContinuation<Result<TranscodedImage, ImageFailure>, Never>
    }

    private struct Pending {
        let id: UInt64
        /// Joined only with the same bytes and limits (a refreshed source is decoded on its own;
        /// the same cached buffer compares by identity, no byte read).
        let source: [UInt8]
        let limits: ImageLimits
        var waiters: [Waiter]
    }

    private struct State {
        var pending: [String: Pending] = [:]
        var nextID: UInt64 = 0
    }

    /// Answers one decode makes at most.
    public static let maxPerDecode = 16
    private let state = Locked(State())
    public let pool: DecodePool
    /// Told of each decode of a source (failed ones too), with the number of answers asked of it.
    private let decoded: @Sendable (_ answers: Int) -> Void

    public init(pool: DecodePool, decoded: @escaping @Sendable (_ answers: Int) -> Void = { _ in }) {
        self.pool = pool
        self.decoded = decoded
    }

    /// `request` made from `source` (known by `key`, e.g. its URL), with any other resize of it
    /// waiting at the time; `busy` when every decoder is busy and the queue full.
    public func transcode(key: String, source: [UInt8], _ request: ImageRequest, limits: ImageLimits) async -> Result<TranscodedImage, ImageFailure> {
        await withCheckedContinuation { continuation in
            let waiter = Waiter(request: request, done: continuation)
            enum Plan { case joined, lead(UInt64), alone }
            let plan = state.withLock { s -> Plan in
                if var pending = s.pending[key] {
                    guard pending.waiters.count < Self.maxPerDecode, pending.limits == limits, pending.source == source else { return .alone }
                    pending.waiters.append(waiter)
                    s.pending[key] = pending
                    return .joined
                }
                s.nextID &+= 1
                s.pending[key] = Pending(id: s.nextID, source: source, limits: limits, waiters: [waiter])
                return .lead(s.nextID)
            }
            switch plan {
            case .joined:
                return
            case .alone:
                let queued = pool.submit { [self] in run(source, [waiter], limits: limits) }
                if !queued { continuation.resume(returning: .failure(.busy)) }
            case .lead(let id):
                // The waiters are taken when a decoder starts: who joined by then is decoded with it.
                let take: @Sendable () -> [Waiter] = { [state] in
                    state.withLock { s in
                        guard let pending = s.pending[key], pending.id == id else { return [] }
                        s.pending[key] = nil
                        return pending.waiters
                    }
                }
                let queued = pool.submit { [self] in run(source, take(), limits: limits) }
                if !queued { for waiter in take() { waiter.done.resume(returning: .failure(.busy)) } }
            }
        }
    }

    /// Resizes of the source known by `key` waiting for a decoder (joined into one decode).
    public func waiting(for key: String) -> Int { state.withLock { $0.pending[key]?.waiters.count ?? 0 } }

    private func run(_ source: [UInt8], _ waiters: [Waiter], limits: ImageLimits) {
        guard !waiters.isEmpty else { return }
        let results: [Result<TranscodedImage, ImageFailure>]
        do throws(ImageFailure) {
            results = try ImageTranscoder.transcode(source, waiters.map(\.request), limits: limits)
        } catch {
            results = Array(repeating: .failure(error), count: waiters.count)
        }
        decoded(waiters.count)
        // Every waiter is answered, whatever came back.
        for (i, waiter) in waiters.enumerated() { waiter.done.resume(returning: i < results.count ? results[i] : .failure(.undecodable)) }
    }
}
