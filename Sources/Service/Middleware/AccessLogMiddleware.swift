import HTTPServer
import Observability
import Primitives

/// The access log (`LOG_LEVEL` info or lower): one JSON line per answered request, rendered
/// on the event loop straight into that loop's log lane.
final class AccessLogMiddleware: Middleware {
    let logger: Logger
    /// Resolves the client when the request did not (a cached answer never does).
    let clients: ClientResolver

    init(logger: Logger, clients: ClientResolver) {
        self.logger = logger
        self.clients = clients
    }

    func ended(_ context: AppRequestContext, _ outcome: RequestOutcome) {
        guard logger.level <= .info else { return }
        // Outside the lane's lock: behind trusted proxies this walks X-Forwarded-For.
        let client = context.client ?? clients.client(peer: context.peer, headers: context.request.headers)
        logger.sink.write(lane: outcome.loop, level: .info, outcome) { r, out in
            out.append(literal: #""request","request_id":"#)
            let id = context.core.id
            if id.generated != 0 {
                out.append(0x22)
                out.append(hex: id.generated, digits: RequestIDGenerator.digits(id.generated))
                out.append(0x22)
            } else {
                LogLine.appendString(id.given, into: &out)
            }
            let trace = context.core.traceIDs
            out.append(literal: #","trace_id":""#)
            out.append(hex: trace.high)
            out.append(hex: trace.low)
            out.append(literal: #"","span_id":""#)
            out.append(hex: trace.span)
            out.append(0x22)
            out.append(literal: #","method":"#)
            LogLine.appendString(context.request.method, into: &out)
            out.append(literal: #","path":"#)
            LogLine.appendString(context.request.target, into: &out)
            out.append(literal: #","route":"#)
            LogLine.appendString(context.route, into: &out)
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
            for (key, value) in context.logFields {
                LogLine.appendKey(key, into: &out)
                // Numbers as numbers; most fields are words, not parsed as one.
                if Self.mayBeNumber(value), let n = Int(value) { out.append(decimal: n) } else { LogLine.appendString(value, into: &out) }
            }
        }
    }

    private static func mayBeNumber(_ value: String) -> Bool {
        guard let first = value.utf8.first else { return false }
        return first == 0x2D || (0x30...0x39).contains(first)
    }
}
