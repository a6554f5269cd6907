import Glibc

/// A handler's answer: ready now (a cache hit stays on the event loop, no Task),
/// or later (awaiting an upstream, off the loop), given the request's context back to fill in.
public enum HandlerResult: Sendable {
    case response(Response)
    case deferred(@Sendable (inout RequestContext) async -> Response)
    /// A long-lived answer (Server-Sent Events): the head now (no length: chunked), then a body
    /// the application writes to the stream it is handed, off the loop, until either side ends it.
    case stream(Response, @Sendable (ResponseStream, RequestContext) async -> Void)
}

public typealias Handler = @Sendable (inout RequestContext) -> HandlerResult

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
    /// Routes without parameters by exact path: the common request needs no splitting.
    /// A list compared by length and bytes, not a dictionary: a service has a few dozen
    /// paths at most, and hashing the path cost more than the whole scan.
    private var literal: [(path: [UInt8], routes: [Route])] = []

    public init() {}

    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        let segments = pattern.split(separator: "/").map { s -> Segment in
            s.hasPrefix(":") ? .parameter(String(s.dropFirst())) : .literal(String(s))
        }
        let route = Route(method: method, pattern: pattern, segments: segments, handler: handler)
        routes.append(route)
        if !segments.contains(where: { if case .parameter = $0 { return true } else { return false } }) {
            let path = "/" + segments.map { if case .literal(let l) = $0 { return l } else { return "" } }.joined(separator: "/")
            if let i = literal.firstIndex(where: { $0.path.elementsEqual(path.utf8) }) {
                literal[i].routes.append(route)
            } else {
                literal.append((Array(path.utf8), [route]))
            }
        }
    }

    public mutating func get(_ pattern: String, _ handler: @escaping Handler) { add("GET", pattern, handler) }

    /// Matches on the raw path; segments are percent-decoded one by one so that an
    /// encoded `/` stays inside its segment.
    func match(method: String, rawPath: Substring) -> Match {
        let lookupMethod = method == "HEAD" ? "GET" : method
        if let candidates = literalRoutes(rawPath) {
            if let route = candidates.first(where: { $0.method == lookupMethod }) {
                return .found(route.handler, parameters: [:], pattern: route.pattern)
            }
            return .methodNotAllowed(allow: Self.allowList(candidates.map(\.method)), pattern: candidates[0].pattern)
        }
        let parts = rawPath.split(separator: "/", omittingEmptySubsequences: true)
        var allow: [String] = []
        var allowPattern = ""
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
        return .methodNotAllowed(allow: Self.allowList(allow), pattern: allowPattern)
    }

    private func literalRoutes(_ path: Substring) -> [Route]? {
        var path = path  // a slice of the native target: contiguous, compared in place
        return path.withUTF8 { bytes in
            for i in literal.indices where literal[i].path.count == bytes.count {
                let same = literal[i].path.withUnsafeBufferPointer { candidate in
                    guard let a = candidate.baseAddress, let b = bytes.baseAddress else { return true }  // both empty
                    return memcmp(a, b, bytes.count) == 0
                }
                if same { return literal[i].routes }
            }
            return nil
        }
    }

    private static func allowList(_ methods: [String]) -> [String] {
        var allow = methods
        if allow.contains("GET") { allow.append("HEAD") }
        allow.append("OPTIONS")
        return allow
    }
}
