import HTTPServer
import Primitives

/// Tracing (`OTEL_EXPORTER_OTLP_ENDPOINT`): decides whether each request's trace is sampled,
/// gives a sampled request's work its span sink (so the cache, the upstream client, Redis and
/// the parse record under it), and records the request as a server span by OpenTelemetry's
/// HTTP server conventions once it is answered.
final class TracingMiddleware: Middleware {
    let phases: MiddlewarePhases = [.prepare, .completed]
    let sink: any SpanSink
    /// Resolves the client for `client.address` when the request did not.
    let clients: ClientResolver

    init(sink: any SpanSink, clients: ClientResolver) {
        self.sink = sink
        self.clients = clients
    }

    func prepare(_ context: inout RequestContext) -> Response? {
        context.trace = sink.decide(context.trace)
        if context.trace.isSampled { context.spanSink = sink }
        return nil
    }

    func completed(_ context: RequestContext, _ outcome: RequestOutcome) {
        guard context.trace.isSampled else { return }
        sink.record(serverSpan(context, outcome))
    }

    func serverSpan(_ c: RequestContext, _ r: RequestOutcome) -> Span {
        let route = c.route.split(separator: "/", omittingEmptySubsequences: false).map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            .joined(separator: "/")
        let method = c.request.method
        var attributes: [(String, Span.Value)] = [
            ("http.request.method", .string(method)), ("http.route", .string(route)),
            ("url.path", .string(String(c.request.rawPath))), ("http.response.status_code", .int(Int64(r.status))),
            ("http.response.body.size", .int(Int64(r.bodyBytes))), ("feedproxy.request_id", .string(c.requestID)),
        ]
        if let client = c.client ?? clients.client(peer: c.peer, headers: c.request.headers) {
            attributes.append(("client.address", .string(client.description)))
        }
        for (key, value) in c.logFields { attributes.append(("feedproxy.\(key)", .string(value))) }
        let end = Span.now()
        return Span(
            trace: c.trace, name: route.hasPrefix("/") ? "\(method) \(route)" : method, kind: .server, start: Span.ago(r.durationSeconds, from: end),
            end: end, attributes: attributes, error: r.status >= 500 ? "HTTP \(r.status)" : nil)
    }
}
