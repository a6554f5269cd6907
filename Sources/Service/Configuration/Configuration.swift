import Observability
import RedisTier

/// Every setting, from environment variables with matching `--flags` (flags win).
public struct Configuration: Sendable {
    public static let version = "1.0.0"

    public var host = "0.0.0.0"
    public var port = 8080
    public var threads = 0
    public var cpuAffinity = true
    public var staleWhileRevalidateFactor = 10.0
    public var staleIfError = 86_400.0
    public var negativeTTL = 10.0
    public var cacheMaxBytes = 64 << 20
    public var upstreamConnectTimeoutMs = 2000
    public var upstreamTimeoutMs = 8000
    public var upstreamMaxBodyBytes = 8 << 20
    /// Longest a cache miss waits in its upstream's fair queue for a token.
    public var upstreamQueueWaitMs = 3000
    /// Misses one client may have waiting per upstream.
    public var upstreamQueuePerClient = 4
    /// Upstream-costing requests per minute per client before `429` (0: off).
    public var clientMissRatePerMinute = 600.0
    /// Clients whose quota is tracked at once (least recently seen forgotten first).
    public var clientStateMax = 100_000
    /// Peers whose `X-Forwarded-For` names the client (empty: trust nobody).
    public var trustedProxies = TrustedProxies()
    public var breakerThreshold = 5
    public var breakerCooldown = 30.0
    /// The optional shared tier (`REDIS_URL`, parsed once); nil keeps everything in this process.
    public var redis: RedisEndpoint?
    /// Sentinels to find the primary through (`REDIS_SENTINELS`); empty: `redis` is the server.
    public var redisSentinels: [RedisAddress] = []
    public var redisSentinelMaster: String?
    public var redisSentinelPassword: String?
    /// Overrides the URL's password (`REDIS_PASSWORD`, or the content of `REDIS_PASSWORD_FILE`).
    public var redisPassword: String?
    /// Where a single node keeps its records across restarts (the feed ids given out):
    /// `records.sqlite` in it. Empty: records last as long as the process (with Redis they
    /// are kept there instead).
    public var dataDirectory: String? = "data"
    /// Prefix of every key FeedProxy writes (two deployments on one Redis keep apart).
    public var redisKeyPrefix = "feedproxy"
    public var redisTimeoutMs = 25
    public var redisConnectTimeoutMs = 100
    public var l2MaxValueBytes = 1 << 20
    public var rateFallbackReplicas = 1
    public var userAgent = "FeedProxy/\(Configuration.version)"
    public var corsOrigin = "*"
    public var headerTimeout = 10.0
    /// nil: the header timeout, so a whole request gets at most twice it.
    public var bodyTimeout: Double?
    public var idleTimeout = 60.0
    public var writeTimeout = 30.0
    public var drainTimeout = 10.0
    /// Seconds `/readyz` reports 503 before the listener closes, so a load balancer can move traffic first.
    public var shutdownDelay = 0.0
    public var maxConnections = 16_384
    public var logLevel = LogLevel.info
    public var allowPrivateFeedHosts = false
    /// `GET /demo`, the built-in page of the three seed apps on the public API.
    public var demoPage = true
    public var upstreamProxy: String?
    /// `--fixtures [DIR]`: serve recorded payloads through an in-process loopback upstream.
    public var fixturesDirectory: String?
    /// What the upstream URLs stand for in the shared-cache key fingerprint, when not
    /// themselves: `--fixtures` sets it, so replicas whose fixture upstreams listen on
    /// different ports still share one L2 (they serve the same recorded payloads).
    public var upstreamIdentity: String?

    // OpenTelemetry's standard variables (the SDK environment specification), for trace export.
    public var otelSDKDisabled = false
    public var otelTracesExporter = "otlp"
    public var otelEndpoint: String?
    public var otelTracesEndpoint: String?
    public var otelProtocol = "http/protobuf"
    public var otelHeaders: [KeyValuePair] = []
    public var otelTimeoutMs = 10_000
    public var otelCompression = "gzip"
    public var otelServiceName = "feedproxy"
    public var otelResourceAttributes: [KeyValuePair] = []
    public var otelTracesSampler = "parentbased_always_on"
    public var otelTracesSamplerArg = 1.0
    public var otelBSPScheduleDelayMs = 5000
    public var otelBSPExportTimeoutMs = 30_000
    public var otelBSPMaxQueueSize = 2048
    public var otelBSPMaxExportBatchSize = 512

    /// The settings the upstreams declare (`SettingKey`), by key; one not here has its default.
    var declaredSettings: [ObjectIdentifier: any Sendable] = [:]

    public init() {}
}

/// `key=value`, as OpenTelemetry's list variables (`OTEL_EXPORTER_OTLP_HEADERS`,
/// `OTEL_RESOURCE_ATTRIBUTES`) give them.
public struct KeyValuePair: Sendable, Equatable {
    public let key: String
    public let value: String
}
