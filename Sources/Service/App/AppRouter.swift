import HTTPServer

extension App {
    /// Every enabled route over the services, with the middleware each needs. Around every
    /// request, outermost first: the access log and the metrics (they see each request's end,
    /// a 404 or a refusal included), tracing (it decides sampling before anything records a
    /// span), CORS (its lines on every answer). Client identity and quota only around the
    /// routes upstreams declare: no other route can cost an upstream, so a 404 flood or a
    /// health probe never works out who its client is nor touches its quota.
    static func router(_ services: Services) throws -> Router<AppRequestContext> {
        var router = Router<AppRequestContext>()
        router.use {
            AccessLogMiddleware(logger: services.logger, clients: services.clientResolver)
            MetricsMiddleware(metrics: services.metrics)
            services.tracing.map { TracingMiddleware(sink: $0, clients: services.clientResolver) }
            CORSMiddleware(origin: services.configuration.corsOrigin)
        }
        let served = try handlers(services)
        router.group(services.clients) { upstream in
            for route in served where route.costsUpstream { upstream.add(route.method, route.route.path, route.handler) }
        }
        for route in served where !route.costsUpstream { router.add(route.method, route.route.path, route.handler) }
        return router
    }
}
