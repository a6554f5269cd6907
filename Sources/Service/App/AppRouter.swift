import HTTPServer

extension App {
    /// Every enabled route over the services, with the middleware each needs. Around every
    /// request, outermost first: the access log and the metrics (they see each request's end,
    /// a 404 or a refusal included), tracing (it decides sampling before anything records a
    /// span), CORS (its lines on every answer). Client identity and quota only for the
    /// routes upstreams declare, a group whose routes run over `MeteredRequestContext`: no
    /// other route can cost an upstream, so a 404 flood or a health probe never works out who
    /// its client is nor touches its quota.
    static func router(_ services: Services) throws -> Router<AppRequestContext> {
        var router = Router<AppRequestContext>()
        router.use {
            AccessLogMiddleware(logger: services.logger, clients: services.clientResolver)
            MetricsMiddleware(metrics: services.metrics)
            services.tracing.map { TracingMiddleware(sink: $0, clients: services.clientResolver) }
            CORSMiddleware(origin: services.configuration.corsOrigin)
        }
        let served = try handlers(services)
        router.group(context: MeteredRequestContext.self, narrowing: services.clients) { metered in
            for route in served { if case .metered(let handler) = route.handler { metered.add(route.method, route.route.path, handler) } }
        }
        for route in served { if case .open(let handler) = route.handler { router.add(route.method, route.route.path, handler) } }
        return router
    }
}
