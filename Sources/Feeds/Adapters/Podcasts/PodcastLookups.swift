import FeedFormats
import Primitives
import Upstream

/// iTunes lookups shared by everything on this replica that needs a podcast looked up (its
/// `/podcasts/{id}` answer, or the feed its episodes are read from): ids asked for within
/// `window` of each other go out together (the window stays open while ids keep coming, up to
/// `maxWait`), up to `maxIDs` (what iTunes' `id=` list takes) a lookup, and an id already on
/// its way is not asked again. The data-loader pattern: a
/// library refresh, a storm of them, and single podcasts opened meanwhile make a few
/// lookups, not one per request. (Across replicas, a feed is loaded by the replica holding
/// its fetch lock: no two replicas look the same podcast up for it.)
public final class PodcastLookups: Sendable {
    /// One id's answer: `/podcasts/{id}`'s body, or why there is none.
    public typealias Answer = Result<[UInt8], LookupFailure>

    /// Why a lookup gave no podcast: iTunes does not know the id, or the lookup failed.
    public enum LookupFailure: Error, Sendable {
        case notFound
        /// A feed id (`FeedID`) whose feed URL is known nowhere: iTunes is never asked for one.
        case unknownFeedID
        case upstream(UpstreamError)
        case unreadable(ClientError)
    }

    private struct State {
        /// Ids waiting for the next lookup, in the order asked, with who waits for each.
        var queued: [Int] = []
        var waiting: [Int: [CheckedContinuation<Answer, Never>]] = [:]
        var flushScheduled = false
        /// When the last id joined the queue (monotonic seconds).
        var lastQueued = 0.0
    }

    let lookupURL: String
    let window: Double
    let maxWait: Double
    let maxIDs: Int
    /// With the image proxy on, artwork is served through it.
    let imageLinks: ImageProxyLinks?
    /// Told each podcast a lookup found (its id and `/podcasts/{id}` answer), whatever becomes
    /// of the load that asked: kept, a retry on any replica finds it instead of a lookup.
    let keep: (@Sendable (Int, [UInt8]) -> Void)?
    /// Where feed ids' URLs are kept for good: a feed id the cache forgot is answered from them.
    let records: (any FeedRecords)?
    private let state = Locked(State())
    /// Lookup requests sent, and ids asked in them (for tests and metrics).
    private let sent = Locked((lookups: 0, ids: 0))

    public init(
        lookupURL: String, window: Double = 0.025, maxWait: Double = 0.1, maxIDs: Int = 200,
        imageLinks: ImageProxyLinks? = nil, records: (any FeedRecords)? = nil, keep: (@Sendable (Int, [UInt8]) -> Void)? = nil
    ) {
        self.imageLinks = imageLinks
        self.records = records
        self.lookupURL = lookupURL
        self.window = window
        self.maxWait = max(window, maxWait)
        self.maxIDs = max(1, maxIDs)
        self.keep = keep
    }

    public var counts: (lookups: Int, ids: Int) { sent.withLock { $0 } }

    /// Podcast `id`'s `/podcasts/{id}` answer, from the next lookup this replica sends (or the
    /// one already carrying `id`). The lookup is sent under the context of whoever's id opened
    /// its window (its fair-queue turn, deadline and trace).
    public func answer(for id: Int, with client: UpstreamClient) async -> Answer {
        // A feed id the cache forgot (a restart, an eviction): its record says its URL, and its
        // answer is made again from it (the feed's read fills the channel in). iTunes cannot know it.
        if FeedID.isFeedID(id) {
            guard let url = await records?.url(of: id), FeedID.id(ofNormalised: url) == id,
                let answer = FeedRegistry.answer(id: id, url: url, channel: nil, images: imageLinks)
            else { return .failure(.unknownFeedID) }
            keep?(id, answer)
            return .success(answer)
        }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Answer, Never>) in
            let (full, schedule) = state.withLock { s -> ([Int]?, Bool) in
                if s.waiting[id] != nil {
                    s.waiting[id]?.append(continuation)
                    return (nil, false)
                }
                s.waiting[id] = [continuation]
                s.queued.append(id)
                s.lastQueued = NativeThread.monotonicSeconds()
                if s.queued.count >= maxIDs { return (take(&s), false) }
                guard !s.flushScheduled else { return (nil, false) }
                s.flushScheduled = true
                return (nil, true)
            }
            if let full { Task { await send(full, with: client) } }
            if schedule {
                let window = self.window, opened = NativeThread.monotonicSeconds(), closesBy = opened + maxWait
                Task {
                    // Quiet for a window (or open for maxWait): then the lookup goes.
                    var wake = opened + window
                    while true {
                        let now = NativeThread.monotonicSeconds()
                        if now < wake { try? await Task.sleep(for: .milliseconds(Saturating.int(((wake - now) * 1000).rounded(.up), in: 1...60_000))) }
                        let (ids, next) = state.withLock { s -> ([Int], Double?) in
                            let quietFrom = s.lastQueued + window
                            if !s.queued.isEmpty, quietFrom > NativeThread.monotonicSeconds(), quietFrom < closesBy { return ([], quietFrom) }
                            s.flushScheduled = false
                            return (take(&s), nil)
                        }
                        if let next {
                            wake = next
                            continue
                        }
                        if !ids.isEmpty { await send(ids, with: client) }
                        return
                    }
                }
            }
        }
    }

    /// The next lookup's ids (at most `maxIDs`); their waiters stay until it is answered.
    private func take(_ s: inout State) -> [Int] {
        let ids = Array(s.queued.prefix(maxIDs))
        s.queued.removeFirst(ids.count)
        return ids
    }

    private func send(_ ids: [Int], with client: UpstreamClient) async {
        sent.withLock {
            $0.lookups += 1
            $0.ids += ids.count
        }
        let request = UpstreamRequest(
            upstream: SourceName.itunes, url: lookupURL.addingQuery("id=\(ids.map(String.init).joined(separator: ","))&entity=podcast"))
        var answers: [Int: Answer] = [:]
        do {
            let body = try await client.send(request).body
            // Read once for every id it answers.
            let podcasts = Dictionary(try ITunesAdapter.podcasts(body, images: imageLinks).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            for id in ids {
                guard let podcast = podcasts[id] else {
                    answers[id] = .failure(.notFound)
                    continue
                }
                do {
                    let answer = try FeedJSON.encode(ItemEnvelope(source: SourceName.itunes, item: podcast))
                    answers[id] = .success(answer)
                    keep?(id, answer)
                } catch {
                    answers[id] = .failure(.unreadable(error))
                }
            }
        } catch let error as UpstreamError {
            for id in ids { answers[id] = .failure(.upstream(error)) }
        } catch let error as ClientError {
            for id in ids { answers[id] = .failure(.unreadable(error)) }
        } catch {
            for id in ids { answers[id] = .failure(.upstream(.other("lookup failed"))) }
        }
        let waiters = state.withLock { s in ids.map { id in (id, s.waiting.removeValue(forKey: id) ?? []) } }
        for (id, continuations) in waiters {
            let answer = answers[id] ?? .failure(.notFound)
            for c in continuations { c.resume(returning: answer) }
        }
    }
}

extension PodcastLookups.LookupFailure {
    /// What a load throws for it: the same errors a single lookup threw.
    public func thrown() -> any Error {
        switch self {
        case .notFound: return EpisodesAdapter.notFound
        case .unknownFeedID: return FeedID.unknown
        case .upstream(let error): return error
        case .unreadable(let error): return error
        }
    }
}
