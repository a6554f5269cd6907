import HTTPServer
import Primitives

/// Feeds every finished request into the metrics and the access log. Runs on the
/// event loop, so the line is rendered straight into that loop's log lane.
struct RequestObserver: ServerObserver {
    let metrics: Metrics
    let logger: Logger
    var clients = ClientResolver(trusted: TrustedProxies())

    func requestCompleted(_ r: RequestRecord) {
        metrics.recordRequest(route: r.route, status: r.status, seconds: r.durationSeconds)
        guard logger.level <= .info else { return }
        // Outside the lane's lock: behind trusted proxies this walks X-Forwarded-For.
        let client = clients.client(peer: r.peer, headers: r.requestHeaders)
        logger.sink.write(lane: r.loop, level: .info) { out in
            out.append(contentsOf: #""request","request_id":"#.utf8)
            LogLine.appendString(r.requestID, into: &out)
            out.append(contentsOf: #","trace_id":""#.utf8)
            TraceContext.appendHex(r.trace.traceHigh, into: &out)
            TraceContext.appendHex(r.trace.traceLow, into: &out)
            out.append(contentsOf: #"","span_id":""#.utf8)
            TraceContext.appendHex(r.trace.spanID, into: &out)
            out.append(0x22)
            out.append(contentsOf: #","method":"#.utf8)
            LogLine.appendString(r.method, into: &out)
            out.append(contentsOf: #","path":"#.utf8)
            LogLine.appendString(r.target, into: &out)
            out.append(contentsOf: #","route":"#.utf8)
            LogLine.appendString(r.route, into: &out)
            out.append(contentsOf: #","status":"#.utf8)
            LogLine.appendInt(r.status, into: &out)
            out.append(contentsOf: #","bytes":"#.utf8)
            LogLine.appendInt(r.bodyBytes, into: &out)
            out.append(contentsOf: #","duration_ms":"#.utf8)
            LogLine.appendMillis(r.durationSeconds * 1000, into: &out)
            if let client {
                out.append(contentsOf: #","client":"#.utf8)
                LogLine.appendAddress(client, into: &out)
            }
            for (key, value) in r.logFields {
                LogLine.appendKey(key, into: &out)
                if let n = Int(value) { LogLine.appendInt(n, into: &out) } else { LogLine.appendString(value, into: &out) }
            }
        }
    }
}
