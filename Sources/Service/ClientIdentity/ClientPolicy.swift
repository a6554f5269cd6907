/// How feed routes tell clients apart and hold each to its miss quota.
struct ClientPolicy: Sendable {
    var resolver = ClientResolver(trusted: TrustedProxies())
    /// nil when `CLIENT_MISS_RATE_PER_MIN` is 0.
    var limiter: ClientLimiter?
    /// With the quota on: counts and logs forwarded requests from untrusted peers.
    var untrustedForwarding: UntrustedForwarding?
}
