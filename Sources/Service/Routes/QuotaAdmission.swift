import Feeds
import HTTPServer
import Primitives
import Synchronization

/// A request's one quota decision (one episode and its parts): taken by its first upstream
/// fetch, the same for the rest, given back when nothing it fetched cost the upstream.
final class RequestAdmission: Sendable {
    private let identity: any ClientIdentity
    private let client: IPAddress?
    /// nil: not decided yet; then the seconds until a retry (0: admitted).
    private let decision = Locked<Double?>(nil)

    init(identity: any ClientIdentity, client: IPAddress?) {
        self.identity = identity
        self.client = client
    }

    func admit() -> Bool {
        guard let client else { return true }
        return decision.withLock { d in
            if d == nil { d = identity.admit(client) ?? 0 }
            return d == 0
        }
    }

    /// Gives the request's unit back when it took one (its fetches cost the upstream nothing).
    func refund() {
        guard let client, decision.withLock({ $0 }) == 0 else { return }
        identity.refund(client)
    }

    /// Seconds until the client may retry, when the request was refused its fetches.
    var refusedFor: Double? { decision.withLock { $0.flatMap { $0 > 0 ? $0 : nil } } }
}

/// A library batch's quota: each feed it makes this replica fetch costs a share of the
/// client's allowance such that a whole library of cold feeds (`EpisodeBatch.maxPodcasts`)
/// costs at most its burst.
/// A refresh of one person's library is admitted from a full allowance; a flood of batches
/// from one address runs out and is throttled to the quota's rate (those podcasts are
/// `client_rate_limited`, with `Retry-After`). A fetch another replica's answer made
/// unnecessary is given back.
final class FetchAdmission: Sendable {
    private let identity: any ClientIdentity
    private let client: IPAddress?
    private let cost: Double
    /// The longest wait a refusal named (seconds), 0 while nothing was refused.
    private let refused = Locked(0.0)

    static let feedsPerAllowance = Double(EpisodeBatch.maxPodcasts)

    init(identity: any ClientIdentity, client: IPAddress?) {
        self.identity = identity
        self.client = client
        cost = (identity.allowance ?? 0) / Self.feedsPerAllowance
    }

    /// Charges one fetch; false when the client's allowance cannot pay for it now.
    func admit() -> Bool {
        guard let client, cost > 0 else { return true }
        guard let retryAfter = identity.admit(client, cost: cost) else { return true }
        refused.withLock { $0 = max($0, retryAfter) }
        return false
    }

    /// Gives one fetch's cost back.
    func refund() {
        guard let client, cost > 0 else { return }
        identity.refund(client, cost: cost)
    }

    /// Seconds until the client may retry, when some fetch was refused.
    var refusedFor: Double? { refused.withLock { $0 > 0 ? $0 : nil } }
}
