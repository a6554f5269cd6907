import Feeds
import HTTPServer
import Primitives
import RedisTier
import Upstream

/// FeedProxy assembled in two steps: configure the services the routes stand on, then
/// build every route of `RouteName` over them and serve.
public final class App: Sendable {
    public let configuration: Configuration
    public let logger: Logger
    private let server: Server
    private let shutdownPhase = ShutdownPhase()
    private let redis: RedisConnection?
    private let tracing: SpanExporter?

    public init(configuration c: Configuration) throws {
        configuration = c
        let serverConfig = ServerConfiguration(c)
        // One log lane per event loop, plus one for every other thread.
        let services = try Services(c, logLanes: serverConfig.resolvedThreads + 1)
        logger = services.logger
        redis = services.redis
        tracing = services.tracing

        let statistics = ServerStatistics()
        let operational = OperationalRoutes(services: services, shutdown: shutdownPhase, statistics: statistics)
        var router = Router()
        for served in try Self.handlers(services, operational: operational) { router.get(served.route.rawValue, served.handler) }
        server = Server(configuration: serverConfig, router: router, middleware: services.middleware, statistics: statistics, shutdown: shutdownPhase)
    }

    /// Binds and starts serving; returns the port.
    public func start() throws -> Int {
        try server.start()
        return server.port
    }

    /// Graceful: readiness goes 503, listeners close, in-flight requests finish.
    public func shutdown() {
        shutdownPhase.announce()
        if configuration.shutdownDelay > 0 { NativeThread.sleep(seconds: configuration.shutdownDelay) }
        server.shutdown()
        tracing?.shutdown()
        redis?.stop()
    }

    /// The CPUs the event loops are pinned to ("0,1"), or "off" when the kernel's hash spreads connections.
    public var cpuPlacement: String { server.placement.map { $0.cpus.map(String.init).joined(separator: ",") } ?? "off" }
}

extension App {
    /// Every enabled route's handler, in `RouteName` order: an upstream's routes from its
    /// declaration, the others operational. A route declared twice, or enabled and served by
    /// nothing, stops startup.
    static func handlers(_ services: Services, operational: OperationalRoutes) throws -> [ServedRoute] {
        var declared: [RouteName: FeedRouteDeclaration] = [:]
        for route in UpstreamCatalog.all.flatMap(\.routes) where declared.updateValue(route, forKey: route.name) != nil {
            throw RouteTableError(description: "\(route.name.rawValue) is declared by two upstreams")
        }
        var handlers: [ServedRoute] = []
        for route in RouteName.allCases where route.isEnabled(services.configuration) {
            // No `Optional.map` or `??` here: through a generic, the handler would be called via
            // reabstraction thunks on every request.
            let handler: Handler
            if let declaration = declared[route] {
                handler = declaration.make(services)
            } else {
                handler = try operational.handler(for: route)
            }
            handlers.append(ServedRoute(route: route, handler: handler))
        }
        return handlers
    }
}

/// A route and its handler, in a struct: a function in a tuple in an Array would be called
/// through reabstraction thunks on every request.
struct ServedRoute {
    let route: RouteName
    let handler: Handler
}

struct RouteTableError: Error, CustomStringConvertible {
    let description: String
}
