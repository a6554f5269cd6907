import Glibc

/// Method + path matching with `:name` parameters, to the number a route was added as: not
/// generic, so the matching is compiled once, here, whatever the application's context type.
public struct RouteTable: Sendable {
    struct Route: Sendable {
        let method: String
        let pattern: String
        let segments: [Segment]
        let index: Int
    }

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    enum Match {
        /// `parameters`: nil for a route without `:name` segments (no dictionary made).
        case found(Int, parameters: [String: String]?, pattern: String)
        case methodNotAllowed(allow: [String], pattern: String)
        case notFound
    }

    private var routes: [Route] = []
    /// Routes without parameters by exact path: the common request needs no splitting.
    /// A list compared by length and bytes, not a dictionary: a service has a few dozen
    /// paths at most, and hashing the path cost more than the whole scan.
    private var literal: [(path: [UInt8], routes: [Route])] = []

    init() {}

    /// Adds a route under `number` (what `resolve` answers for its requests: its handler's
    /// place in the router).
    @usableFromInline mutating func add(_ method: String, _ pattern: String, number: Int) {
        let segments = pattern.split(separator: "/").map { s -> Segment in
            s.hasPrefix(":") ? .parameter(String(s.dropFirst())) : .literal(String(s))
        }
        let route = Route(method: method, pattern: pattern, segments: segments, index: number)
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

    /// Where a request goes: the number of its route (its pattern and parameters put on the
    /// context), or the server's own answer (404, 405 with `Allow`, `204` with `Allow` for OPTIONS).
    @usableFromInline enum Resolution {
        case route(Int)
        case answer(Response)
    }

    @usableFromInline func resolve(_ core: CoreRequestContext) -> Resolution {
        let method = core.request.method
        let isOptions = core.request.isOptions
        if isOptions && core.request.target == "*" {
            core.route = "*"
            return .answer(Self.options(allow: ["GET", "HEAD", "OPTIONS"]))
        }
        switch match(method: core.request.isHead ? "GET" : method, rawPath: core.request.rawPath) {
        case .found(let index, let parameters, let pattern):
            core.route = pattern
            core.routeIndex = index
            if let parameters, !parameters.isEmpty { core.pathParameters = parameters }
            return .route(index)
        case .methodNotAllowed(let allow, let pattern):
            core.route = pattern
            if isOptions { return .answer(Self.options(allow: allow)) }
            var response = Response.error(status: 405, code: "method_not_allowed", message: "\(method) is not allowed on this path")
            response.headers.add("Allow", allow.joined(separator: ", "))
            return .answer(response)
        case .notFound:
            core.route = "(unmatched)"
            return .answer(.error(status: 404, code: "not_found", message: "no route for this path"))
        }
    }

    /// RFC 9110 §9.3.7: what the target allows (a CORS middleware adds its preflight fields).
    private static func options(allow: [String]) -> Response {
        var response = Response(status: 204)
        response.headers.add("Allow", allow.joined(separator: ", "))
        return response
    }

    /// Matches on the raw path; segments are percent-decoded one by one so that an
    /// encoded `/` stays inside its segment.
    /// `method`: the one routes are looked up by (GET for a HEAD).
    func match(method lookupMethod: String, rawPath: Substring) -> Match {
        if let at = literalIndex(rawPath) {
            // Read in place (a copy of the list was a retain and a release per request).
            for route in literal[at].routes where route.method == lookupMethod {
                return .found(route.index, parameters: nil, pattern: route.pattern)
            }
            return .methodNotAllowed(allow: Self.allowList(literal[at].routes.map(\.method)), pattern: literal[at].routes[0].pattern)
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
            if route.method == lookupMethod { return .found(route.index, parameters: params, pattern: route.pattern) }
            allow.append(route.method)
            allowPattern = route.pattern
        }
        if allow.isEmpty { return .notFound }
        return .methodNotAllowed(allow: Self.allowList(allow), pattern: allowPattern)
    }

    private func literalIndex(_ path: Substring) -> Int? {
        var path = path  // a slice of the native target: contiguous, compared in place
        return path.withUTF8 { bytes in
            for i in literal.indices where literal[i].path.count == bytes.count {
                let same = literal[i].path.withUnsafeBufferPointer { candidate in
                    guard let a = candidate.baseAddress, let b = bytes.baseAddress else { return true }  // both empty
                    return memcmp(a, b, bytes.count) == 0
                }
                if same { return i }
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
