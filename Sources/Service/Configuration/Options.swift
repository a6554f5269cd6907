import Primitives

/// Every setting, declared once: flag, environment variable, where the value goes, how it
/// is parsed, and its help text; an upstream's own settings are in its declaration
/// (`Catalog/`). Parsing, `--help` and docs/configuration.md (scripts/generate/settings-reference.py) all come from here.
extension ConfigurationParser {
    static let options: [Option] = server + UpstreamCatalog.all.flatMap(\.options) + general

    /// Where and how it listens.
    private static let server: [Option] = [
        Option("--port", "PORT", \.port, .integer(0...65535), "TCP port to listen on (0 picks a free one)"),
        Option("--host", "HOST", \.host, .ipv4, "IPv4 address to listen on"),
        Option("--threads", "THREADS", \.threads, .integer(0...256), "event-loop threads (0 = one per core)"),
        Option(
            "--cpu-affinity", "CPU_AFFINITY", \.cpuAffinity, .bool,
            "with one loop per allowed CPU, pin each loop to its CPU (batch-scheduled) and accept connections on the loop of the CPU they arrive on"),
    ]

    /// Everything not of one upstream: caches, upstream client, clients, Redis, HTTP, tracing.
    private static let general: [Option] = [
        Option(
            "--cache-swr-factor", "CACHE_SWR_FACTOR", \.staleWhileRevalidateFactor, .factor(0...1000),
            "stale-while-revalidate window as a multiple of the TTL"),
        Option(
            "--cache-stale-if-error", "CACHE_STALE_IF_ERROR", \.staleIfError, .seconds(),
            "seconds a last good response may be served while the upstream fails"),
        Option("--cache-negative-ttl", "CACHE_NEGATIVE_TTL", \.negativeTTL, .seconds(), "seconds an upstream 4xx answer is remembered"),
        Option("--cache-max-bytes", "CACHE_MAX_BYTES", \.cacheMaxBytes, .bytes(1024...(1 << 40)), "memory budget of the response cache"),
        Option(
            "--upstream-connect-timeout-ms", "UPSTREAM_CONNECT_TIMEOUT_MS", \.upstreamConnectTimeoutMs, .integer(1...600_000),
            "upstream connect timeout"),
        Option(
            "--upstream-timeout-ms", "UPSTREAM_TIMEOUT_MS", \.upstreamTimeoutMs, .integer(1...600_000),
            "total upstream time budget per request, retry included"),
        Option(
            "--upstream-max-body-bytes", "UPSTREAM_MAX_BODY_BYTES", \.upstreamMaxBodyBytes, .bytes(1024...(1 << 31)),
            "largest upstream JSON body accepted"),
        Option(
            "--upstream-queue-wait-ms", "UPSTREAM_QUEUE_WAIT_MS", \.upstreamQueueWaitMs, .integer(0...600_000),
            "longest a cache miss waits for its turn at an upstream's rate limit (0: fail at once)"),
        Option(
            "--upstream-queue-per-client", "UPSTREAM_QUEUE_PER_CLIENT", \.upstreamQueuePerClient, .integer(1...1000),
            "misses one client may have waiting per upstream"),
        Option(
            "--client-miss-rate", "CLIENT_MISS_RATE_PER_MIN", \.clientMissRatePerMinute, .rate(allowZero: true),
            "upstream-costing requests per minute from one client address before 429: a flood guard sized for many people behind one NAT (0 = off)"),
        Option(
            "--client-state-max", "CLIENT_STATE_MAX", \.clientStateMax, .integer(1...100_000_000),
            "clients whose quota is remembered (LRU, about 100 bytes each)"),
        Option(
            "--trusted-proxies", "TRUSTED_PROXIES", \.trustedProxies, .cidrList,
            "CIDR list of proxies whose X-Forwarded-For names the client (empty: trust nobody)"),
        Option("--breaker-threshold", "BREAKER_THRESHOLD", \.breakerThreshold, .integer(1...1000), "consecutive upstream failures that open the circuit"),
        Option("--breaker-cooldown", "BREAKER_COOLDOWN_S", \.breakerCooldown, .seconds(), "seconds an open circuit fails fast before one probe"),
        Option(
            "--redis-url", "REDIS_URL", \.redis, .redisURL,
            "redis://[[user]:password@]host[:port][/db]: shared cache, fetch locks and rate budget across replicas (unset: none)"),
        Option(
            "--redis-sentinels", "REDIS_SENTINELS", \.redisSentinels, .addressList,
            "comma list of host:port Redis Sentinels that name the primary (with REDIS_SENTINEL_MASTER; REDIS_URL then gives only credentials and db)"),
        Option("--redis-sentinel-master", "REDIS_SENTINEL_MASTER", \.redisSentinelMaster, .optionalName, "the master name the sentinels monitor"),
        Option(
            "--redis-sentinel-password", "REDIS_SENTINEL_PASSWORD", \.redisSentinelPassword, .optionalSecret, "password the sentinels require (unset: none)"),
        Option("--redis-password", "REDIS_PASSWORD", \.redisPassword, .optionalSecret, "Redis password, instead of one in REDIS_URL (unset: the URL's)"),
        Option(
            "--redis-password-file", "REDIS_PASSWORD_FILE", \.redisPassword, .secretFile,
            "file holding the Redis password (a mounted Secret; trailing newline ignored)"),
        Option(
            "--data-dir", "DATA_DIR", \.dataDirectory, .optionalPath,
            "directory of records.sqlite, where a single node keeps the feed ids it gave out across restarts (with REDIS_URL they are kept in Redis; empty: in memory)"
        ),
        Option("--redis-key-prefix", "REDIS_KEY_PREFIX", \.redisKeyPrefix, .keyPrefix, "prefix of every Redis key (cache, locks, rate budget)"),
        Option(
            "--redis-timeout-ms", "REDIS_TIMEOUT_MS", \.redisTimeoutMs, .integer(1...10_000),
            "deadline of a Redis command a request waits on; past it the request carries on without Redis (background work waits 20 times longer)"),
        Option("--redis-connect-timeout-ms", "REDIS_CONNECT_TIMEOUT_MS", \.redisConnectTimeoutMs, .integer(1...60_000), "deadline for connecting to Redis"),
        Option(
            "--l2-max-value-bytes", "L2_MAX_VALUE_BYTES", \.l2MaxValueBytes, .bytes(0...(512 << 20)), "larger responses stay in this replica's cache only"),
        Option(
            "--rate-limit-fallback-replicas", "RATE_LIMIT_FALLBACK_REPLICAS", \.rateFallbackReplicas, .integer(1...10_000),
            "with Redis unreachable, each replica allows RATE_LIMIT_*_PER_MIN divided by this (set it to the replica count)"),
        Option("--user-agent", "USER_AGENT", \.userAgent, .headerLine(allowEmpty: false), "User-Agent sent upstream"),
        Option("--cors-origin", "CORS_ORIGIN", \.corsOrigin, .headerLine(allowEmpty: true), "Access-Control-Allow-Origin value (empty: none)"),
        Option("--header-timeout", "HEADER_TIMEOUT_S", \.headerTimeout, .seconds(allowZero: false), "seconds a client may take to send a request head"),
        Option(
            "--body-timeout", "BODY_TIMEOUT_S", \.bodyTimeout, .optionalSeconds(unsetFollows: "HEADER_TIMEOUT_S"),
            "seconds from the end of a request head to the end of its body (408 after)"),
        Option("--idle-timeout", "IDLE_TIMEOUT_S", \.idleTimeout, .seconds(allowZero: false), "seconds an idle keep-alive connection is kept"),
        Option("--write-timeout", "WRITE_TIMEOUT_S", \.writeTimeout, .seconds(allowZero: false), "seconds a stalled client may leave a response unread"),
        Option("--drain-timeout", "DRAIN_TIMEOUT_S", \.drainTimeout, .seconds(), "seconds in-flight requests get to finish on shutdown"),
        Option(
            "--shutdown-delay", "SHUTDOWN_DELAY_S", \.shutdownDelay, .seconds(), "seconds /readyz answers 503 before the listener closes on SIGTERM"),
        Option("--max-connections", "MAX_CONNECTIONS", \.maxConnections, .integer(1...1_000_000), "open client connections before new ones are refused"),
        Option("--log-level", "LOG_LEVEL", \.logLevel, .logLevel, "debug, info (one line per request), warn or error"),
        Option(
            "--upstream-proxy", "UPSTREAM_PROXY", \.upstreamProxy, .proxyURL,
            "send every upstream request through this http(s)/socks5h proxy (unset: direct; http_proxy and the like are ignored)"),
        Option("--demo-page", "DEMO_PAGE", \.demoPage, .bool, "serve GET /demo, the built-in page of the three seed apps (false: the JSON API alone)"),
        Option(
            "--allow-private-feed-hosts", "ALLOW_PRIVATE_FEED_HOSTS", \.allowPrivateFeedHosts, .bool,
            "let podcast feed URLs point at loopback/private addresses (tests, offline mode)"),
        // Trace export: OpenTelemetry's own variable names and meanings.
        Option("--otel-sdk-disabled", "OTEL_SDK_DISABLED", \.otelSDKDisabled, .bool, "true: no spans are recorded or exported"),
        Option("--otel-traces-exporter", "OTEL_TRACES_EXPORTER", \.otelTracesExporter, .choice(["otlp", "none"]), "otlp, or none for no trace export"),
        Option(
            "--otel-exporter-otlp-endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT", \.otelEndpoint, .optionalHTTPURL,
            "OTLP/HTTP collector base URL; spans go to its /v1/traces (unset, with no traces endpoint: no export)"),
        Option(
            "--otel-exporter-otlp-traces-endpoint", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", \.otelTracesEndpoint, .optionalHTTPURL,
            "the full URL spans are posted to (wins over OTEL_EXPORTER_OTLP_ENDPOINT)"),
        Option(
            "--otel-exporter-otlp-protocol", "OTEL_EXPORTER_OTLP_PROTOCOL", \.otelProtocol, .choice(["http/protobuf"]),
            "the OTLP transport: http/protobuf (the one every collector accepts)"),
        Option(
            "--otel-exporter-otlp-headers", "OTEL_EXPORTER_OTLP_HEADERS", \.otelHeaders, .keyValueList(secret: true),
            "key=value,… headers sent with every export (values percent-decoded; an API key, say)"),
        Option("--otel-exporter-otlp-timeout", "OTEL_EXPORTER_OTLP_TIMEOUT", \.otelTimeoutMs, .integer(1...600_000), "milliseconds one export may take"),
        Option(
            "--otel-exporter-otlp-compression", "OTEL_EXPORTER_OTLP_COMPRESSION", \.otelCompression, .choice(["gzip", "none"]),
            "gzip or none: the export body's encoding"),
        Option("--otel-service-name", "OTEL_SERVICE_NAME", \.otelServiceName, .headerLine(allowEmpty: false), "service.name of every span"),
        Option(
            "--otel-resource-attributes", "OTEL_RESOURCE_ATTRIBUTES", \.otelResourceAttributes, .keyValueList(secret: false),
            "key=value,… resource attributes (deployment.environment.name=prod, …)"),
        Option(
            "--otel-traces-sampler", "OTEL_TRACES_SAMPLER", \.otelTracesSampler, .choice(TraceSampler.names),
            "which traces are recorded: always_on, always_off, traceidratio, or parentbased_* (a caller's sampled flag decides)"),
        Option(
            "--otel-traces-sampler-arg", "OTEL_TRACES_SAMPLER_ARG", \.otelTracesSamplerArg, .factor(0...1),
            "the share of new traces the *traceidratio samplers record"),
        Option("--otel-bsp-schedule-delay", "OTEL_BSP_SCHEDULE_DELAY", \.otelBSPScheduleDelayMs, .integer(1...600_000), "milliseconds between exports"),
        Option(
            "--otel-bsp-export-timeout", "OTEL_BSP_EXPORT_TIMEOUT", \.otelBSPExportTimeoutMs, .integer(1...600_000),
            "milliseconds an export may take, retries included"),
        Option(
            "--otel-bsp-max-queue-size", "OTEL_BSP_MAX_QUEUE_SIZE", \.otelBSPMaxQueueSize, .integer(1...1_000_000),
            "spans waiting for export before new ones are dropped (counted)"),
        Option("--otel-bsp-max-export-batch-size", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", \.otelBSPMaxExportBatchSize, .integer(1...100_000), "spans per export"),
    ]
}

/// A setting: its flag, environment variable, help text, and — from the key path and the
/// parser it was declared with — how a value is applied and how its default is shown.
struct Option: Sendable {
    let flag: String
    let env: String
    let help: String
    let defaultText: @Sendable (Configuration) -> String
    let apply: @Sendable (inout Configuration, String) throws(ConfigurationError) -> Void
    /// Where its value goes (a test matches the settings code reads against the options).
    let keyPath: AnyKeyPath & Sendable

    init<Value>(
        _ flag: String, _ env: String, _ keyPath: WritableKeyPath<Configuration, Value> & Sendable, _ parser: ValueParser<Value>, _ help: String
    ) {
        self.flag = flag
        self.env = env
        self.help = help
        self.keyPath = keyPath
        defaultText = { parser.show($0[keyPath: keyPath]) }
        apply = { configuration, text throws(ConfigurationError) in
            if text.isEmpty && parser.emptyLeavesValue { return }
            configuration[keyPath: keyPath] = try parser.parse(env, text)
        }
    }
}
