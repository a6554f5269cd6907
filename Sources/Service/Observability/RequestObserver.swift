import HTTPServer
import Primitives

/// Feeds every finished request into the metrics and the access log. Runs on the
/// event loop, so the line is rendered straight into that loop's log lane.
struct RequestObserver: ServerObserver {
    let metrics: Metrics
    let logger: Logger
    var clients = ClientResolver(trusted: TrustedProxies())
    /// Where the request's server span goes, when it is sampled.
    var spanSink: (any SpanSink)?

    func requestCompleted(_ r: RequestRecord) {
        metrics.recordRequest(route: r.route, status: r.status, seconds: r.durationSeconds)
        if let spanSink, r.trace.isSampled { spanSink.record(serverSpan(r)) }
        guard logger.level <= .info else { return }
        // Outside the lane's lock: behind trusted proxies this walks X-Forwarded-For.
        let client = r.client ?? clients.client(peer: r.peer, headers: r.requestHeaders)
        logger.sink.write(lane: r.loop, level: .info, r) { r, out in
            out.append(literal: #""request","request_id":"#)
            LogLine.appendString(r.requestID, into: &out)
            out.append(literal: #","trace_id":""#)
            out.append(hex: r.trace.traceHigh)
            out.append(hex: r.trace.traceLow)
            out.append(literal: #"","span_id":""#)
            out.append(hex: r.trace.spanID)
            out.append(0x22)
            out.append(literal: #","method":"#)
            LogLine.appendString(r.method, into: &out)
            out.append(literal: #","path":"#)
            LogLine.appendString(r.target, into: &out)
            out.append(literal: #","route":"#)
            LogLine.appendString(r.route, into: &out)
            out.append(literal: #","status":"#)
            out.append(decimal: r.status)
            out.append(literal: #","bytes":"#)
            out.append(decimal: r.bodyBytes)
            out.append(literal: #","duration_ms":"#)
            LogLine.appendMillis(r.durationSeconds * 1000, into: &out)
            if let client {
                out.append(literal: #","client":"#)
                LogLine.appendAddress(client, into: &out)
            }
            for (key, value) in r.logFields {
                LogLine.appendKey(key, into: &out)
                if let n = Int(value) { out.append(decimal: n) } else { LogLine.appendString(value, into: &out) }
            }
        }
    }
}

extension RequestObserver {
    /// The request as a server span, by OpenTelemetry's HTTP server conventions; the work it
    /// caused (cache, upstream, Redis, parse) recorded its spans under it.
    func serverSpan(_ r: RequestRecord) -> Span {
        let route = r.route.split(separator: "/", omittingEmptySubsequences: false).map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            .joined(separator: "/")
        var attributes: [(String, Span.Value)] = [
            ("http.request.method", .string(r.method)), ("http.route", .string(route)),
            ("url.path", .string(String(r.target.prefix { $0 != "?" }))), ("http.response.status_code", .int(Int64(r.status))),
            ("http.response.body.size", .int(Int64(r.bodyBytes))), ("feedproxy.request_id", .string(r.requestID)),
        ]
        if let client = r.client ?? clients.client(peer: r.peer, headers: r.requestHeaders) {
            attributes.append(("client.address", .string(client.description)))
        }
        for (key, value) in r.logFields { attributes.append(("feedproxy.\(key)", .string(value))) }
        let end = Span.now()
        return Span(
            trace: r.trace, name: route.hasPrefix("/") ? "\(r.method) \(route)" : r.method, kind: .server, start: Span.ago(r.durationSeconds, from: end),
            end: end, attributes: attributes, error: r.status >= 500 ? "HTTP \(r.status)" : nil)
    }
}
