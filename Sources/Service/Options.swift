import RedisTier

/// The table of settings: one row per option, used for parsing, `--help` and the README.
extension ConfigurationParser {
    typealias P = ConfigurationParser

    static let options: [Option] = [
        Option(flag: "--port", env: "PORT", help: "TCP port to listen on (0 picks a free one)", defaultText: { "\($0.port)" }) {
            c, v throws(ConfigurationError) in c.port = try P.int("PORT", v, 0...65535)
        },
        Option(flag: "--host", env: "HOST", help: "IPv4 address to listen on", defaultText: { $0.host }) { c, v throws(ConfigurationError) in
            let parts = v.split(separator: ".")
            guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else {
                throw ConfigurationError(description: "HOST must be an IPv4 address, got \"\(v)\"")
            }
            c.host = v
        },
        Option(flag: "--threads", env: "THREADS", help: "event-loop threads (0 = one per core)", defaultText: { "\($0.threads)" }) {
            c, v throws(ConfigurationError) in c.threads = try P.int("THREADS", v, 0...256)
        },
        Option(
            flag: "--cpu-affinity", env: "CPU_AFFINITY",
            help: "with one loop per allowed CPU, pin each loop to its CPU and accept connections on the loop of the CPU they arrive on",
            defaultText: { "\($0.cpuAffinity)" }
        ) { c, v throws(ConfigurationError) in c.cpuAffinity = try P.bool("CPU_AFFINITY", v) },
        Option(flag: "--flickr-feed-url", env: "FLICKR_FEED_URL", help: "Flickr public photo feed endpoint", defaultText: { $0.flickrFeedURL }) {
            c, v throws(ConfigurationError) in c.flickrFeedURL = try P.url("FLICKR_FEED_URL", v)
        },
        Option(flag: "--itunes-search-url", env: "ITUNES_SEARCH_URL", help: "iTunes Search endpoint", defaultText: { $0.itunesSearchURL }) {
            c, v throws(ConfigurationError) in c.itunesSearchURL = try P.url("ITUNES_SEARCH_URL", v)
        },
        Option(flag: "--itunes-lookup-url", env: "ITUNES_LOOKUP_URL", help: "iTunes Lookup endpoint (podcast episodes)", defaultText: { $0.itunesLookupURL }) {
            c, v throws(ConfigurationError) in c.itunesLookupURL = try P.url("ITUNES_LOOKUP_URL", v)
        },
        Option(flag: "--kiva-graphql-url", env: "KIVA_GRAPHQL_URL", help: "Kiva GraphQL endpoint", defaultText: { $0.kivaGraphQLURL }) {
            c, v throws(ConfigurationError) in c.kivaGraphQLURL = try P.url("KIVA_GRAPHQL_URL", v)
        },
        Option(
            flag: "--kiva-loans-url", env: "KIVA_LOANS_URL", help: "when set, use Kiva's legacy REST newest-loans endpoint instead of GraphQL",
            defaultText: { $0.kivaLoansURL ?? "unset" }
        ) { c, v throws(ConfigurationError) in c.kivaLoansURL = v.isEmpty ? nil : try P.url("KIVA_LOANS_URL", v) },
        Option(flag: "--cache-ttl-photos", env: "CACHE_TTL_PHOTOS", help: "seconds /photos stays fresh", defaultText: { "\(Int($0.ttlPhotos))" }) {
            c, v throws(ConfigurationError) in c.ttlPhotos = try P.seconds("CACHE_TTL_PHOTOS", v)
        },
        Option(flag: "--cache-ttl-podcasts", env: "CACHE_TTL_PODCASTS", help: "seconds /podcasts stays fresh", defaultText: { "\(Int($0.ttlPodcasts))" }) {
            c, v throws(ConfigurationError) in c.ttlPodcasts = try P.seconds("CACHE_TTL_PODCASTS", v)
        },
        Option(flag: "--cache-ttl-loans", env: "CACHE_TTL_LOANS", help: "seconds /loans stays fresh", defaultText: { "\(Int($0.ttlLoans))" }) {
            c, v throws(ConfigurationError) in c.ttlLoans = try P.seconds("CACHE_TTL_LOANS", v)
        },
        Option(
            flag: "--cache-ttl-episodes", env: "CACHE_TTL_EPISODES", help: "seconds /podcasts/{id}/episodes stays fresh",
            defaultText: { "\(Int($0.ttlEpisodes))" }
        ) { c, v throws(ConfigurationError) in c.ttlEpisodes = try P.seconds("CACHE_TTL_EPISODES", v) },
        Option(
            flag: "--cache-swr-factor", env: "CACHE_SWR_FACTOR", help: "stale-while-revalidate window as a multiple of the TTL",
            defaultText: { "\(Int($0.staleWhileRevalidateFactor))" }
        ) { c, v throws(ConfigurationError) in c.staleWhileRevalidateFactor = try P.factor("CACHE_SWR_FACTOR", v, 0...1000) },
        Option(
            flag: "--cache-stale-if-error", env: "CACHE_STALE_IF_ERROR", help: "seconds a last good response may be served while the upstream fails",
            defaultText: { "\(Int($0.staleIfError))" }
        ) { c, v throws(ConfigurationError) in c.staleIfError = try P.seconds("CACHE_STALE_IF_ERROR", v) },
        Option(
            flag: "--cache-negative-ttl", env: "CACHE_NEGATIVE_TTL", help: "seconds an upstream 4xx answer is remembered",
            defaultText: { "\(Int($0.negativeTTL))" }
        ) { c, v throws(ConfigurationError) in c.negativeTTL = try P.seconds("CACHE_NEGATIVE_TTL", v) },
        Option(flag: "--cache-max-bytes", env: "CACHE_MAX_BYTES", help: "memory budget of the response cache", defaultText: { "\($0.cacheMaxBytes)" }) {
            c, v throws(ConfigurationError) in c.cacheMaxBytes = try P.int("CACHE_MAX_BYTES", v, 1024...(1 << 40))
        },
        Option(
            flag: "--upstream-connect-timeout-ms", env: "UPSTREAM_CONNECT_TIMEOUT_MS", help: "upstream connect timeout",
            defaultText: { "\($0.upstreamConnectTimeoutMs)" }
        ) { c, v throws(ConfigurationError) in c.upstreamConnectTimeoutMs = try P.int("UPSTREAM_CONNECT_TIMEOUT_MS", v, 1...600_000) },
        Option(
            flag: "--upstream-timeout-ms", env: "UPSTREAM_TIMEOUT_MS", help: "total upstream time budget per request, retry included",
            defaultText: { "\($0.upstreamTimeoutMs)" }
        ) { c, v throws(ConfigurationError) in c.upstreamTimeoutMs = try P.int("UPSTREAM_TIMEOUT_MS", v, 1...600_000) },
        Option(
            flag: "--upstream-max-body-bytes", env: "UPSTREAM_MAX_BODY_BYTES", help: "largest upstream JSON body accepted",
            defaultText: { "\($0.upstreamMaxBodyBytes)" }
        ) { c, v throws(ConfigurationError) in c.upstreamMaxBodyBytes = try P.int("UPSTREAM_MAX_BODY_BYTES", v, 1024...(1 << 31)) },
        Option(flag: "--feed-max-body-bytes", env: "FEED_MAX_BODY_BYTES", help: "largest podcast RSS feed accepted", defaultText: { "\($0.feedMaxBodyBytes)" })
        { c, v throws(ConfigurationError) in c.feedMaxBodyBytes = try P.int("FEED_MAX_BODY_BYTES", v, 1024...(1 << 31)) },
        Option(
            flag: "--rate-limit-itunes", env: "RATE_LIMIT_ITUNES_PER_MIN", help: "iTunes requests per minute (its published limit is about 20)",
            defaultText: { "\(Int($0.rateITunesPerMinute))" }
        ) { c, v throws(ConfigurationError) in c.rateITunesPerMinute = try P.rate("RATE_LIMIT_ITUNES_PER_MIN", v) },
        Option(
            flag: "--rate-limit-kiva", env: "RATE_LIMIT_KIVA_PER_MIN", help: "Kiva requests per minute (60 unregistered)",
            defaultText: { "\(Int($0.rateKivaPerMinute))" }
        ) { c, v throws(ConfigurationError) in c.rateKivaPerMinute = try P.rate("RATE_LIMIT_KIVA_PER_MIN", v) },
        Option(
            flag: "--rate-limit-flickr", env: "RATE_LIMIT_FLICKR_PER_MIN", help: "Flickr feed requests per minute",
            defaultText: { "\(Int($0.rateFlickrPerMinute))" }
        ) { c, v throws(ConfigurationError) in c.rateFlickrPerMinute = try P.rate("RATE_LIMIT_FLICKR_PER_MIN", v) },
        Option(
            flag: "--upstream-queue-wait-ms", env: "UPSTREAM_QUEUE_WAIT_MS",
            help: "longest a cache miss waits for its turn at an upstream's rate limit (0: fail at once)", defaultText: { "\($0.upstreamQueueWaitMs)" }
        ) { c, v throws(ConfigurationError) in c.upstreamQueueWaitMs = try P.int("UPSTREAM_QUEUE_WAIT_MS", v, 0...600_000) },
        Option(
            flag: "--upstream-queue-per-client", env: "UPSTREAM_QUEUE_PER_CLIENT", help: "misses one client may have waiting per upstream",
            defaultText: { "\($0.upstreamQueuePerClient)" }
        ) { c, v throws(ConfigurationError) in c.upstreamQueuePerClient = try P.int("UPSTREAM_QUEUE_PER_CLIENT", v, 1...1000) },
        Option(
            flag: "--client-miss-rate", env: "CLIENT_MISS_RATE_PER_MIN", help: "upstream-costing requests per minute per client before 429 (0 = off)",
            defaultText: { "\(Int($0.clientMissRatePerMinute))" }
        ) { c, v throws(ConfigurationError) in c.clientMissRatePerMinute = try P.rate("CLIENT_MISS_RATE_PER_MIN", v, allowZero: true) },
        Option(
            flag: "--client-state-max", env: "CLIENT_STATE_MAX", help: "clients whose quota is remembered (LRU, about 100 bytes each)",
            defaultText: { "\($0.clientStateMax)" }
        ) { c, v throws(ConfigurationError) in c.clientStateMax = try P.int("CLIENT_STATE_MAX", v, 1...100_000_000) },
        Option(
            flag: "--trusted-proxies", env: "TRUSTED_PROXIES", help: "CIDR list of proxies whose X-Forwarded-For names the client (empty: trust nobody)",
            defaultText: { $0.trustedProxies.isEmpty ? "unset" : $0.trustedProxies.description }
        ) { c, v throws(ConfigurationError) in c.trustedProxies = try TrustedProxies.parse(v).get() },
        Option(
            flag: "--breaker-threshold", env: "BREAKER_THRESHOLD", help: "consecutive upstream failures that open the circuit",
            defaultText: { "\($0.breakerThreshold)" }
        ) { c, v throws(ConfigurationError) in c.breakerThreshold = try P.int("BREAKER_THRESHOLD", v, 1...1000) },
        Option(
            flag: "--breaker-cooldown", env: "BREAKER_COOLDOWN_S", help: "seconds an open circuit fails fast before one probe",
            defaultText: { "\(Int($0.breakerCooldown))" }
        ) { c, v throws(ConfigurationError) in c.breakerCooldown = try P.seconds("BREAKER_COOLDOWN_S", v) },
        Option(
            flag: "--redis-url", env: "REDIS_URL",
            help: "redis://[[user]:password@]host[:port][/db]: shared cache, fetch locks and rate budget across replicas (unset: none)",
            defaultText: { $0.redisURL ?? "unset" }
        ) { c, v throws(ConfigurationError) in
            if v.isEmpty {
                c.redisURL = nil
                return
            }
            do throws(RedisEndpoint.InvalidURL) { _ = try RedisEndpoint(url: v) } catch { throw ConfigurationError(description: error.description) }
            c.redisURL = v
        },
        Option(
            flag: "--redis-timeout-ms", env: "REDIS_TIMEOUT_MS", help: "deadline per Redis command; past it the replica carries on without Redis",
            defaultText: { "\($0.redisTimeoutMs)" }
        ) {
            c, v throws(ConfigurationError) in c.redisTimeoutMs = try P.int("REDIS_TIMEOUT_MS", v, 1...10_000)
        },
        Option(
            flag: "--redis-connect-timeout-ms", env: "REDIS_CONNECT_TIMEOUT_MS", help: "deadline for connecting to Redis",
            defaultText: { "\($0.redisConnectTimeoutMs)" }
        ) { c, v throws(ConfigurationError) in c.redisConnectTimeoutMs = try P.int("REDIS_CONNECT_TIMEOUT_MS", v, 1...60_000) },
        Option(
            flag: "--l2-max-value-bytes", env: "L2_MAX_VALUE_BYTES", help: "larger responses stay in this replica's cache only",
            defaultText: { "\($0.l2MaxValueBytes)" }
        ) { c, v throws(ConfigurationError) in c.l2MaxValueBytes = try P.int("L2_MAX_VALUE_BYTES", v, 0...(512 << 20)) },
        Option(
            flag: "--rate-limit-fallback-replicas", env: "RATE_LIMIT_FALLBACK_REPLICAS",
            help: "with Redis unreachable, each replica allows RATE_LIMIT_*_PER_MIN divided by this (set it to the replica count)",
            defaultText: { "\($0.rateFallbackReplicas)" }
        ) { c, v throws(ConfigurationError) in c.rateFallbackReplicas = try P.int("RATE_LIMIT_FALLBACK_REPLICAS", v, 1...10_000) },
        Option(flag: "--user-agent", env: "USER_AGENT", help: "User-Agent sent upstream", defaultText: { $0.userAgent }) { c, v throws(ConfigurationError) in
            guard !v.isEmpty, !v.contains("\r"), !v.contains("\n") else { throw ConfigurationError(description: "USER_AGENT must be one non-empty line") }
            c.userAgent = v
        },
        Option(flag: "--cors-origin", env: "CORS_ORIGIN", help: "Access-Control-Allow-Origin value (empty: none)", defaultText: { $0.corsOrigin }) {
            c, v throws(ConfigurationError) in
            guard !v.contains("\r"), !v.contains("\n") else { throw ConfigurationError(description: "CORS_ORIGIN must be one line") }
            c.corsOrigin = v
        },
        Option(
            flag: "--header-timeout", env: "HEADER_TIMEOUT_S", help: "seconds a client may take to send a request head",
            defaultText: { "\(Int($0.headerTimeout))" }
        ) { c, v throws(ConfigurationError) in c.headerTimeout = try P.seconds("HEADER_TIMEOUT_S", v, allowZero: false) },
        Option(flag: "--idle-timeout", env: "IDLE_TIMEOUT_S", help: "seconds an idle keep-alive connection is kept", defaultText: { "\(Int($0.idleTimeout))" })
        { c, v throws(ConfigurationError) in c.idleTimeout = try P.seconds("IDLE_TIMEOUT_S", v, allowZero: false) },
        Option(
            flag: "--write-timeout", env: "WRITE_TIMEOUT_S", help: "seconds a stalled client may leave a response unread",
            defaultText: { "\(Int($0.writeTimeout))" }
        ) { c, v throws(ConfigurationError) in c.writeTimeout = try P.seconds("WRITE_TIMEOUT_S", v, allowZero: false) },
        Option(
            flag: "--drain-timeout", env: "DRAIN_TIMEOUT_S", help: "seconds in-flight requests get to finish on shutdown",
            defaultText: { "\(Int($0.drainTimeout))" }
        ) { c, v throws(ConfigurationError) in c.drainTimeout = try P.seconds("DRAIN_TIMEOUT_S", v) },
        Option(
            flag: "--shutdown-delay", env: "SHUTDOWN_DELAY_S", help: "seconds /readyz answers 503 before the listener closes on SIGTERM",
            defaultText: { "\(Int($0.shutdownDelay))" }
        ) { c, v throws(ConfigurationError) in c.shutdownDelay = try P.seconds("SHUTDOWN_DELAY_S", v) },
        Option(
            flag: "--max-connections", env: "MAX_CONNECTIONS", help: "open client connections before new ones are refused",
            defaultText: { "\($0.maxConnections)" }
        ) { c, v throws(ConfigurationError) in c.maxConnections = try P.int("MAX_CONNECTIONS", v, 1...1_000_000) },
        Option(flag: "--log-level", env: "LOG_LEVEL", help: "debug, info (one line per request), warn or error", defaultText: { $0.logLevel.rawValue }) {
            c, v throws(ConfigurationError) in
            guard let level = LogLevel(rawValue: v.lowercased()) else {
                throw ConfigurationError(description: "LOG_LEVEL must be debug, info, warn or error, got \"\(v)\"")
            }
            c.logLevel = level
        },
        Option(
            flag: "--upstream-proxy", env: "UPSTREAM_PROXY",
            help: "send every upstream request through this http(s)/socks5h proxy (unset: direct; http_proxy and the like are ignored)",
            defaultText: { $0.upstreamProxy ?? "unset" }
        ) { c, v throws(ConfigurationError) in
            guard !v.isEmpty else {
                c.upstreamProxy = nil
                return
            }
            let scheme = v.split(separator: ":", maxSplits: 1).first?.lowercased() ?? ""
            guard ["http", "https", "socks5", "socks5h"].contains(scheme), v.contains("://"), !v.contains("\r"), !v.contains("\n") else {
                throw ConfigurationError(description: "UPSTREAM_PROXY must be an http://, https://, socks5:// or socks5h:// URL, got \"\(v)\"")
            }
            c.upstreamProxy = v
        },
        Option(
            flag: "--allow-private-feed-hosts", env: "ALLOW_PRIVATE_FEED_HOSTS",
            help: "let podcast feed URLs point at loopback/private addresses (tests, offline mode)", defaultText: { "\($0.allowPrivateFeedHosts)" }
        ) { c, v throws(ConfigurationError) in c.allowPrivateFeedHosts = try P.bool("ALLOW_PRIVATE_FEED_HOSTS", v) },
    ]
}
