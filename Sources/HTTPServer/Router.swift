/// A handler's answer: ready now (a cache hit stays on the event loop, no Task),
/// or later (awaiting an upstream, off the loop).
public enum HandlerResult: Sendable {
    case response(Response)
    case deferred(@Sendable () async -> Response)
}

public typealias Handler = @Sendable (Request) -> HandlerResult

/// Method + path routing with `:name` parameters.
public struct Router: Sendable {
    struct Route: Sendable {
        let method: String
        let pattern: String
        let segments: [Segment]
        let handler: Handler
    }

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    enum Match {
        case found(Handler, parameters: [String: String], pattern: String)
        case methodNotAllowed(allow: [String], pattern: String)
        case notFound
    }

    private var routes: [Route] = []

    public init() {}

    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        let segments = pattern.split(separator: "/").map { s -> Segment in
            s.hasPrefix(":") ? .parameter(String(s.dropFirst())) : .literal(String(s))
        }
        routes.append(Route(method: method, pattern: pattern, segments: segments, handler: handler))
    }

    public mutating func get(_ pattern: String, _ handler: @escaping Handler) { add("GET", pattern, handler) }

    /// Matches on the raw path; segments are percent-decoded one by one so that an
    /// encoded `/` stays inside its segment.
    func match(method: String, rawPath: Substring) -> Match {
        let parts = rawPath.split(separator: "/", omittingEmptySubsequences: true)
        var allow: [String] = []
        var allowPattern = ""
        let lookupMethod = method == "HEAD" ? "GET" : method
        for route in routes where route.segments.count == parts.count {
            var params: [String: String] = [:]
            var ok = true
            for (segment, part) in zip(route.segments, parts) {
                switch segment {
                case .literal(let lit):
                    if lit != part && lit != PercentCoding.decodePathSegment(part) { ok = false }
                case .parameter(let name):
                    params[name] = PercentCoding.decodePathSegment(part)
                }
                if !ok { break }
            }
            guard ok else { continue }
            if route.method == lookupMethod { return .found(route.handler, parameters: params, pattern: route.pattern) }
            allow.append(route.method)
            allowPattern = route.pattern
        }
        if allow.isEmpty { return .notFound }
        if allow.contains("GET") { allow.append("HEAD") }
        allow.append("OPTIONS")
        return .methodNotAllowed(allow: allow, pattern: allowPattern)
    }
}
