import HTTPServer
import Primitives

/// The access log (`LOG_LEVEL` info or lower): one JSON line per answered request, rendered
/// on the event loop straight into that loop's log lane.
struct AccessLogMiddleware: Middleware {
    let phases: MiddlewarePhases = .completed
    let logger: Logger
    /// Resolves the client when the request did not (a cached answer never does).
    let clients: ClientResolver

    func completed(_ r: RequestRecord) {
        guard logger.level <= .info else { return }
        let c = r.context
        // Outside the lane's lock: behind trusted proxies this walks X-Forwarded-For.
        let client = c.client ?? clients.client(peer: c.peer, headers: c.request.headers)
        logger.sink.write(lane: r.loop, level: .info, r) { r, out in
            let c = r.context
            out.append(literal: #""request","request_id":"#)
            LogLine.appendString(c.requestID, into: &out)
            out.append(literal: #","trace_id":""#)
            out.append(hex: c.trace.traceHigh)
            out.append(hex: c.trace.traceLow)
            out.append(literal: #"","span_id":""#)
            out.append(hex: c.trace.spanID)
            out.append(0x22)
            out.append(literal: #","method":"#)
            LogLine.appendString(c.request.method, into: &out)
            out.append(literal: #","path":"#)
            LogLine.appendString(c.request.target, into: &out)
            out.append(literal: #","route":"#)
            LogLine.appendString(c.route, into: &out)
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
            for (key, value) in c.logFields {
                LogLine.appendKey(key, into: &out)
                if let n = Int(value) { out.append(decimal: n) } else { LogLine.appendString(value, into: &out) }
            }
        }
    }
}
