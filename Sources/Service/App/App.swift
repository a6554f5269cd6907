import Feeds
import HTTPServer
import Observability
import Primitives
import RedisTier
import Upstream

/// FeedProxy assembled in two steps: configure the services the routes stand on, then
/// build every declared route over them and serve.
public final class App: Sendable {
    public let configuration: Configuration
    public let logger: Logger
    private let server: Server
    private let shutdownPhase: ShutdownPhase
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

        shutdownPhase = services.shutdown
        server = Server(
            configuration: serverConfig, responder: AppResponder(try Self.router(services)), statistics: services.statistics,
            shutdown: services.shutdown)
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
    /// Every enabled route's handler, in the order they are declared (`RouteDeclaration.all`).
    /// A path declared twice stops startup.
    static func handlers(_ services: Services) throws -> [ServedRoute] {
        var seen = Set<String>()
        var handlers: [ServedRoute] = []
        for route in RouteDeclaration.all {
            guard seen.insert(route.method + " " + route.name.path).inserted else {
                throw RouteTableError(description: "\(route.method) \(route.name.path) is declared twice")
            }
            if route.isEnabled(services.configuration) {
                handlers.append(ServedRoute(route: route.name, method: route.method, handler: route.make(services)))
            }
        }
        return handlers
    }
}

/// A route and its handler, in a struct: a function in a tuple in an Array would be called
/// through reabstraction thunks on every request.
struct ServedRoute {
    let route: RouteName
    let method: String
    let handler: DeclaredHandler
}

struct RouteTableError: Error, CustomStringConvertible {
    let description: String
}
