import Feeds
import HTTPServer
import RedisTier
import Upstream

// Each layer's own configuration, built from the settings in one place.

extension ServerConfiguration {
    init(_ c: Configuration) {
        self.init()
        host = c.host
        port = c.port
        threads = c.threads
        cpuAffinity = c.cpuAffinity
        headerTimeout = c.headerTimeout
        bodyTimeout = c.bodyTimeout ?? c.headerTimeout
        idleTimeout = c.idleTimeout
        writeTimeout = c.writeTimeout
        drainTimeout = c.drainTimeout
        maxConnections = c.maxConnections
    }
}

extension UpstreamConfiguration {
    /// Everything but the shared budget and the observers, which the wiring adds.
    init(_ c: Configuration) {
        self.init()
        connectTimeoutMs = c.upstreamConnectTimeoutMs
        timeoutMs = c.upstreamTimeoutMs
        maxBodyBytes = c.upstreamMaxBodyBytes
        userAgent = c.userAgent
        proxy = c.upstreamProxy
        breakerThreshold = c.breakerThreshold
        breakerCooldownSeconds = c.breakerCooldown
        ratePerMinute = UpstreamCatalog.ratesPerMinute(c)
        queueWaitMs = c.upstreamQueueWaitMs
        queuePerClient = c.upstreamQueuePerClient
        fallbackReplicas = c.rateFallbackReplicas
    }
}

extension RedisConnection.Settings {
    init(_ endpoint: RedisEndpoint, _ c: Configuration) {
        self.init(endpoint: endpoint)
        commandTimeoutMs = c.redisTimeoutMs
        connectTimeoutMs = c.redisConnectTimeoutMs
        // An entry's body and its gzip variant (each at most L2_MAX_VALUE_BYTES, itself bounded), plus the fields around them.
        maxReplyBytes = c.l2MaxValueBytes * 2 + (64 << 10)
        scripts = RedisConnection.tierScripts
        sentinels = c.redisSentinels
        masterName = c.redisSentinelMaster ?? ""
        sentinelPassword = c.redisSentinelPassword
    }
}
