import Foundation
import Testing
import Upstream
@testable import HTTPServer
@testable import Service

/// What is derived from the upstream declarations, checked for every declaration: a new
/// upstream is covered by these tests the moment it is added to `UpstreamCatalog.all`.
@Suite struct UpstreamCatalogTests {
    static func parse(_ environment: [String: String]) throws -> Configuration {
        guard case .run(let c) = try ConfigurationParser.parse(arguments: [], environment: environment) else {
            throw ConfigurationError(description: "not a run")
        }
        return c
    }

    /// Every route on: the image proxy needs its key, the demo page is on by default.
    static func services() throws -> Services {
        var c = Configuration()
        c.imageProxyKey = "catalog-test"
        return try Services(c, logLanes: 1)
    }

    @Test func everyRouteIsServedOnceByItsUpstreamOrAsAnOperationalRoute() throws {
        let services = try Self.services()
        let operational = OperationalRoutes(services: services, shutdown: ShutdownPhase(), statistics: ServerStatistics())
        let declared = UpstreamCatalog.all.flatMap(\.routes).map(\.name)
        #expect(Set(declared).count == declared.count, "a route declared by two upstreams")
        for route in RouteName.allCases {
            let isOperational = (try? operational.handler(for: route)) != nil
            #expect(declared.contains(route) != isOperational, "\(route.rawValue): served by \(isOperational ? "both" : "nothing")")
        }
        #expect(try App.handlers(services, operational: operational).map(\.route) == RouteName.allCases)
    }

    @Test func everyUpstreamRouteIsInTheOpenAPIDocument() throws {
        let document = try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any]
        let paths = Set((document?["paths"] as? [String: Any])?.keys.map { $0 } ?? [])
        for route in UpstreamCatalog.all.flatMap(\.routes).map(\.name) {
            let path = route.rawValue.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
            #expect(paths.contains("/" + path), "\(route.rawValue) is not in the OpenAPI document (scripts/generate/openapi.py)")
        }
    }

    /// Two replicas with different upstream URLs must not share cache entries.
    @Test func everyEndpointShapesTheSharedCacheFingerprint() throws {
        let base = SchemaFingerprint.compute(Configuration())
        for endpoint in UpstreamCatalog.all.flatMap(\.endpoints) {
            let moved = try Self.parse([endpoint.option.env: "https://elsewhere.example/api"])
            #expect(SchemaFingerprint.compute(moved) != base, "\(endpoint.option.env) does not change the fingerprint")
        }
    }

    /// `--fixtures` must never reach the internet: every endpoint, optional ones once set.
    @Test func fixtureModePointsEveryEndpointAtTheFixtureUpstream() throws {
        let fixtures = "http://127.0.0.1:9"
        var everySet = try Self.parse(
            Dictionary(uniqueKeysWithValues: UpstreamCatalog.all.flatMap(\.endpoints).map { ($0.option.env, "https://real.example/api") }))
        everySet.pointUpstreams(atFixtures: fixtures)
        for endpoint in UpstreamCatalog.all.flatMap(\.endpoints) {
            #expect(endpoint.value(everySet) == fixtures + endpoint.fixturePath, "\(endpoint.option.env) is not pointed at the fixtures")
        }
        var defaults = Configuration()
        defaults.pointUpstreams(atFixtures: fixtures)
        for endpoint in UpstreamCatalog.all.flatMap(\.endpoints) where endpoint.isOptional {
            #expect(endpoint.value(defaults) == nil, "\(endpoint.option.env) was switched on by --fixtures")
        }
        // Fixture replicas share one fingerprint whichever port their fixture upstream has.
        var other = Configuration()
        other.pointUpstreams(atFixtures: "http://127.0.0.1:10")
        #expect(SchemaFingerprint.compute(defaults) == SchemaFingerprint.compute(other))
    }

    /// Replicas started beside a `--fixtures` one are pointed at its fixture upstream with
    /// one flag (the scripts do), whatever endpoint settings they were given.
    @Test func fixturesUpstreamPointsEveryEndpointAtAnotherProcesssFixtures() throws {
        guard
            case .run(let c) = try ConfigurationParser.parse(
                arguments: ["--fixtures-upstream", "http://127.0.0.1:9"], environment: ["FLICKR_FEED_URL": "https://real.example/feed"])
        else { throw ConfigurationError(description: "not a run") }
        for endpoint in UpstreamCatalog.all.flatMap(\.endpoints) where !endpoint.isOptional {
            #expect(endpoint.value(c) == "http://127.0.0.1:9" + endpoint.fixturePath)
        }
        var fixtures = Configuration()
        fixtures.pointUpstreams(atFixtures: "http://127.0.0.1:10")
        // The same fingerprint as the --fixtures replica whose upstream it uses: they share Redis entries.
        #expect(SchemaFingerprint.compute(c) == SchemaFingerprint.compute(fixtures))
        #expect(throws: ConfigurationError.self) { try ConfigurationParser.parse(arguments: ["--fixtures-upstream", "ftp://x"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try ConfigurationParser.parse(arguments: ["--fixtures-upstream"], environment: [:]) }
    }

    @Test func everyRateLimitReachesTheUpstreamClientsBudget() throws {
        let limited = UpstreamCatalog.all.filter { $0.rateLimit != nil }
        #expect(!limited.isEmpty)
        for upstream in limited {
            let env = try #require(upstream.rateLimit?.option.env)
            let c = try Self.parse([env: "7"])
            #expect(UpstreamConfiguration(c).ratePerMinute[upstream.source] == 7, "\(env) is accepted and ignored")
        }
        #expect(Set(UpstreamConfiguration(Configuration()).ratePerMinute.keys) == Set(limited.map(\.source)))
    }

    @Test func everyUpstreamIsCountedInTheMetrics() throws {
        let services = try Self.services()
        for source in UpstreamCatalog.sources {
            #expect(services.metrics.caches[source] != nil, "no cache counters for \(source)")
        }
    }

    @Test func everyUpstreamSettingIsParsedAndDocumentedOnce() {
        let envs = ConfigurationParser.options.map(\.env)
        #expect(Set(envs).count == envs.count)
        let help = ConfigurationParser.helpText()
        for option in UpstreamCatalog.all.flatMap(\.options) { #expect(help.contains("(\(option.env))")) }
    }

    @Test func theFixtureEnvironmentNamesEveryRequiredEndpoint() {
        let env = UpstreamCatalog.fixtureEnvironment(baseURL: "http://127.0.0.1:9")
        #expect(env["FLICKR_FEED_URL"] == "http://127.0.0.1:9/services/feeds/photos_public.gne")
        #expect(env["KIVA_LOANS_URL"] == nil)  // optional: it switches Kiva to its REST API
        #expect(env.count == UpstreamCatalog.all.flatMap(\.endpoints).filter { !$0.isOptional }.count)
    }
}
