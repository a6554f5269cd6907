import HTTPServer
import Primitives

/// Tracing (`OTEL_EXPORTER_OTLP_ENDPOINT`): decides whether each request's trace is sampled,
/// runs a sampled request's deferred work, and a stream's body (its first loads), under its
/// span (so the cache, the upstream client, Redis and the parse record as its children), and
/// records the request as a server span by OpenTelemetry's HTTP server conventions at its end
/// (a stream's when it closes).
final class TracingMiddleware: Middleware {
    let sink: any SpanSink
    /// Resolves the client for `client.address` when the request did not.
    let clients: ClientResolver

    init(sink: any SpanSink, clients: ClientResolver) {
        self.sink = sink
        self.clients = clients
    }

    func handle(_ context: inout AppRequestContext, next: (inout AppRequestContext) -> HandlerResult<AppRequestContext>) -> HandlerResult<
        AppRequestContext
    > {
        context.traceFlags = sink.decide(context.core.trace).flags
        let result = next(&context)
        // Work on the loop records nothing; deferred work and a stream's body record under the request's span.
        guard context.traceFlags & 1 == 1 else { return result }
        switch result {
        case .response: return result
        case .deferred(let work):
            guard let scope = TraceScope.sampled(context.trace, sink: sink) else { return result }
            return .deferred { context in await TraceScope.$current.withValue(scope) { await work(&context) } }
        case .stream(let head, let open):
            guard let scope = TraceScope.sampled(context.trace, sink: sink) else { return result }
            return .stream(head) { stream, context in await TraceScope.$current.withValue(scope) { await open(stream, context) } }
        }
    }

    func ended(_ context: AppRequestContext, _ outcome: RequestOutcome) {
        guard context.traceFlags & 1 == 1 else { return }
        sink.record(serverSpan(context, outcome))
    }

    func serverSpan(_ c: AppRequestContext, _ r: RequestOutcome) -> Span {
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
