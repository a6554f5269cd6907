import Primitives

/// What an upstream request's client span says, by OpenTelemetry's HTTP client conventions
/// (`url.full` without credentials or secret-looking query values), plus libcurl's phase times.
enum UpstreamSpan {
    static func attributes(_ request: UpstreamRequest, attempt: Int) -> [(String, Span.Value)] {
        var out: [(String, Span.Value)] = [
            ("http.request.method", .string(request.method.rawValue)), ("url.full", .string(redacted(request.url))),
            ("feedproxy.upstream", .string(request.upstream)),
        ]
        if let host = request.target.host { out.append(("server.address", .string(host))) }
        if attempt > 1 { out.append(("http.request.resend_count", .int(Int64(attempt - 1)))) }
        if request.revalidation != nil { out.append(("feedproxy.conditional", .bool(true))) }
        return out
    }

    static func note(_ result: Result<UpstreamResponse, UpstreamError>, into notes: inout SpanNotes) {
        switch result {
        case .success(let response):
            notes.set("http.response.status_code", .int(Int64(response.status)))
            notes.set("http.response.body.size", .int(Int64(response.body.count)))
            if response.isNotModified { notes.set("feedproxy.not_modified", .bool(true)) }
            let t = response.timings
            for (key, seconds) in [
                ("curl.namelookup_time", t.dns), ("curl.connect_time", t.connect), ("curl.appconnect_time", t.tls), ("curl.starttransfer_time", t.firstByte),
            ]
            where seconds.isFinite && seconds > 0 {
                notes.set(key, .double(seconds))
            }
            notes.set("feedproxy.new_connections", .int(Int64(response.newConnections)))
        case .failure(let error):
            if case .httpStatus(let status) = error { notes.set("http.response.status_code", .int(Int64(status))) }
            notes.set("error.type", .string(error.code))
            notes.error = error.description
        }
    }

    /// Query parameter names whose values are secrets (API keys, tokens, signatures).
    static let secretNames: Set<String> = [
        "key", "apikey", "api_key", "token", "access_token", "auth", "password", "secret", "sig", "signature", "x-amz-signature", "awsaccesskeyid",
    ]

    /// The URL without user:password and with secret-looking query values replaced.
    static func redacted(_ url: String) -> String {
        var out = url
        if let scheme = out.firstRange(of: "://") {
            let rest = out[scheme.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") { out.replaceSubrange(scheme.upperBound...at, with: "REDACTED:REDACTED@") }
        }
        guard let question = out.firstIndex(of: "?") else { return out }
        let fragment = out[question...].firstIndex(of: "#") ?? out.endIndex
        let pairs = out[out.index(after: question)..<fragment].split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let name = pair.prefix { $0 != "=" }
            return secretNames.contains(name.lowercased()) && name.count < pair.count ? "\(name)=REDACTED" : String(pair)
        }
        return String(out[...question]) + pairs.joined(separator: "&") + out[fragment...]
    }
}
