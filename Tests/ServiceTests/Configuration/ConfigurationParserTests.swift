import HTTPServer
import RedisTier
import TestSupport
import Testing
@testable import Service

/// Settings parsed once into typed values, by parsers named for what they parse.
@Suite(.offPool) struct ConfigurationParserTests {
    static func parse(_ arguments: [String] = [], _ environment: [String: String] = [:]) throws -> Configuration {
        guard case .run(let c) = try ConfigurationParser.parse(arguments: arguments, environment: environment) else {
            throw ConfigurationError(description: "not a run")
        }
        return c
    }

    @Test func environmentThenFlagsWithTypedValues() throws {
        let c = try Self.parse(
            ["--port=9090", "--rate-limit-itunes", "12.5"],
            ["PORT": "7070", "REDIS_URL": "redis://:s3cret@cache.internal:6380/2", "TRUSTED_PROXIES": "10.0.0.0/8", "CACHE_TTL_PHOTOS": "90"])
        #expect(c.port == 9090)
        #expect(c[Setting.rateITunesPerMinute] == 12.5)
        #expect(c.redis == (try RedisEndpoint(url: "redis://:s3cret@cache.internal:6380/2")))
        #expect(c.redis?.port == 6380 && c.redis?.database == 2 && c.redis?.password == "s3cret")
        #expect(c.trustedProxies.description == "10.0.0.0/8")
        #expect(c[Setting.ttlPhotos] == 90)
    }

    /// A secret's `_FILE` variable left empty (a template's `${X_FILE:-}`) is no file: it
    /// must not erase the secret given directly.
    @Test func anEmptySecretFileLeavesTheSecretGiven() throws {
        let c = try Self.parse([], ["IMAGE_PROXY_KEY": "k", "IMAGE_PROXY_KEY_FILE": "", "REDIS_PASSWORD": "p", "REDIS_PASSWORD_FILE": ""])
        #expect(c[Setting.imageProxyKey] == "k")
        #expect(c.redisPassword == "p")
        #expect(try Self.parse(["--image-proxy-key-file="], ["IMAGE_PROXY_KEY": "k"])[Setting.imageProxyKey] == "k")
        #expect(try Self.parse([], ["IMAGE_PROXY_KEY_FILE": ""])[Setting.imageProxyKey] == nil)
    }

    /// Unset, the body deadline is the head's: a whole request gets at most twice HEADER_TIMEOUT_S.
    @Test func bodyTimeoutFollowsTheHeaderTimeoutUnlessSet() throws {
        #expect(ServerConfiguration(try Self.parse([], ["HEADER_TIMEOUT_S": "3"])).bodyTimeout == 3)
        #expect(ServerConfiguration(try Self.parse(["--body-timeout", "30"], ["HEADER_TIMEOUT_S": "3"])).bodyTimeout == 30)
        #expect(ServerConfiguration(try Self.parse()).bodyTimeout == 10)
        #expect(throws: ConfigurationError.self) { try Self.parse(["--body-timeout", "0"]) }
    }

    @Test(arguments: [
        (["--redis-url", "http://x"], "REDIS_URL must start with redis://"),
        (["--rate-limit-kiva", "0"], "RATE_LIMIT_KIVA_PER_MIN must be a number of requests per minute from 0.01 to 1000000, got \"0\""),
        (["--cache-max-bytes", "10"], "CACHE_MAX_BYTES must be an integer between 1024 and"),
        (["--user-agent", ""], "USER_AGENT must be one non-empty line"),
        (["--trusted-proxies", "10.0.0.0/99"], "TRUSTED_PROXIES"),
    ])
    func badValuesNameTheirSetting(_ arguments: [String], _ message: String) {
        do {
            _ = try Self.parse(arguments)
            Issue.record("accepted \(arguments)")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }

    @Test func everyOptionIsDeclaredOnceAndShowsItsDefault() {
        let flags = ConfigurationParser.options.map(\.flag), envs = ConfigurationParser.options.map(\.env)
        #expect(Set(flags).count == flags.count && Set(envs).count == envs.count)
        let defaults = Configuration()
        #expect(ConfigurationParser.options.first { $0.env == "CACHE_TTL_PHOTOS" }?.defaultText(defaults) == "60")
        #expect(ConfigurationParser.options.first { $0.env == "REDIS_URL" }?.defaultText(defaults) == "unset")
    }
}
