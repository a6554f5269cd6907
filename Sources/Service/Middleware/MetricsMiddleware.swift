import HTTPServer

/// Every answered request into `feedproxy_requests_total` and the duration histogram, by route and status.
struct MetricsMiddleware: Middleware {
    let phases: MiddlewarePhases = .completed
    let metrics: Metrics

    func completed(_ r: RequestRecord) {
        metrics.recordRequest(route: r.context.route, status: r.status, seconds: r.durationSeconds)
    }
}
