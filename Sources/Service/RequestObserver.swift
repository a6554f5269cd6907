import HTTPServer

/// Feeds every finished request into the metrics and the access log.
struct RequestObserver: ServerObserver {
    let metrics: Metrics
    let logger: Logger
    var clients = ClientResolver(trusted: TrustedProxies())

    func requestCompleted(_ r: RequestRecord) {
        metrics.recordRequest(route: r.route, status: r.status, seconds: r.durationSeconds)
        guard logger.level <= .info else { return }
        var fields: [(String, LogValue)] = [
            ("request_id", .string(r.requestID)), ("method", .string(r.method)), ("path", .string(r.target)),
            ("route", .string(r.route)), ("status", .int(r.status)), ("bytes", .int(r.bodyBytes)),
            ("duration_ms", .double(r.durationSeconds * 1000)),
        ]
        if let client = clients.client(peer: r.peer, headers: r.requestHeaders) { fields.append(("client", .string(client.description))) }
        for (key, value) in r.logFields {
            fields.append((key, Int(value).map { .int($0) } ?? .string(value)))
        }
        logger.log(.info, "request", fields)
    }
}
