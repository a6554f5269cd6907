import HTTPServer
import Observability
import Primitives
import Synchronization

/// Makes a forgotten `TRUSTED_PROXIES` visible on day one: with the per-client quota on,
/// a request carrying `X-Forwarded-For` from a peer that is not a trusted proxy means a
/// proxy in front that FeedProxy does not trust, so every user behind it shares one quota.
/// Counted in `/metrics` and logged once a minute at most. Checked for misses only (requests
/// that went to the upstream, the only ones the quota charges): a cached answer never reads the header.
final class UntrustedForwarding: Sendable {
    static let logInterval = 60.0

    private let seen = Counter()
    private let lastLogged = Locked<Double>(-.infinity)
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    var count: Int { seen.current }

    func check(peer: IPAddress?, headers: RequestHeaders, trusted: TrustedProxies, now: @autoclosure () -> Double) {
        guard let peer, headers.contains("x-forwarded-for"), !trusted.contains(peer) else { return }
        seen.add()
        let now = now()
        let due = lastLogged.withLock { last -> Bool in
            guard now - last >= Self.logInterval else { return false }
            last = now
            return true
        }
        guard due else { return }
        logger.warn(
            "X-Forwarded-For from a peer outside TRUSTED_PROXIES: every client behind it shares one miss quota",
            [("peer", .string(peer.description)), ("trusted_proxies", .string(trusted.isEmpty ? "unset" : trusted.description))])
    }
}
