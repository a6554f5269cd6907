import HTTPServer
import Observability

/// Every answered request into `feedproxy_requests_total` and the duration histogram, by route and status.
final class MetricsMiddleware: Middleware {
    let metrics: Metrics

    init(metrics: Metrics) { self.metrics = metrics }

    func ended(_ context: AppRequestContext, _ outcome: RequestOutcome) {
        metrics.recordRequest(route: context.route, status: outcome.status, seconds: outcome.headSeconds)
    }
}
