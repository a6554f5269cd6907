/// Where finished spans go (the OTLP exporter), and which traces are recorded at all.
public protocol SpanSink: AnyObject, Sendable {
    /// The trace with its sampled flag decided (a new trace by the sampler's ratio, a
    /// continued one by its parent's flag when the sampler follows parents).
    func decide(_ trace: TraceContext) -> TraceContext
    /// Takes a finished span; never blocks (a full queue drops it).
    func record(_ span: Span)
}

/// The span work in progress belongs to: its trace (whose `spanID` is the parent of any
/// span started under it) and the sink spans go to. A task-local, so every layer (the cache,
/// the upstream client, Redis, a feed's parse) records under the request that caused it
/// without being handed anything; none is set when tracing is off or the trace is not sampled.
public struct TraceScope: Sendable {
    public let trace: TraceContext
    public let sink: any SpanSink

    public init(trace: TraceContext, sink: any SpanSink) {
        self.trace = trace
        self.sink = sink
    }

    @TaskLocal public static var current: TraceScope?

    /// The scope for `trace` when it is sampled; nil otherwise.
    public static func sampled(_ trace: TraceContext, sink: (any SpanSink)?) -> TraceScope? {
        guard let sink, trace.isSampled else { return nil }
        return TraceScope(trace: trace, sink: sink)
    }

    /// Runs `body` as a child span of the current scope (its own scope while it runs), then
    /// records it with `attributes` and those `body` set; without a scope, just runs it
    /// (`attributes` is then never evaluated, and `body`'s notes go nowhere).
    public static func span<T>(
        _ name: String, kind: Span.Kind = .internal, _ attributes: @autoclosure () -> [(String, Span.Value)] = [],
        _ body: (inout SpanNotes) async throws -> T
    ) async rethrows -> T {
        guard let scope = current else {
            var ignored = SpanNotes([])
            return try await body(&ignored)
        }
        var notes = SpanNotes(attributes())
        let child = scope.child()
        let start = Span.now()
        do {
            let value = try await $current.withValue(child) { try await body(&notes) }
            scope.sink.record(notes.span(child.trace, name, kind, start))
            return value
        } catch {
            if notes.error == nil { notes.error = String(describing: error) }
            scope.sink.record(notes.span(child.trace, name, kind, start))
            throw error
        }
    }

    /// The same for synchronous work (a parse).
    public static func syncSpan<T>(
        _ name: String, _ attributes: @autoclosure () -> [(String, Span.Value)] = [], _ body: (inout SpanNotes) throws -> T
    ) rethrows -> T {
        guard let scope = current else {
            var ignored = SpanNotes([])
            return try body(&ignored)
        }
        var notes = SpanNotes(attributes())
        let child = scope.child()
        let start = Span.now()
        defer { scope.sink.record(notes.span(child.trace, name, .internal, start)) }
        do {
            return try $current.withValue(child) { try body(&notes) }
        } catch {
            if notes.error == nil { notes.error = String(describing: error) }
            throw error
        }
    }

    /// Runs `body` as the root span of a new trace linked to `request` (work a request
    /// started but does not wait for: a background refresh), when the sampler records it;
    /// never under the scope of the task that started it. `attributes` is evaluated only
    /// when the span is to be recorded.
    public static func root<T>(
        _ name: String, linkedTo request: TraceContext, sink: (any SpanSink)?, _ attributes: @autoclosure () -> [(String, Span.Value)] = [],
        _ body: () async -> T
    ) async -> T {
        var ids = TraceIDs()
        guard let sink else { return await $current.withValue(nil) { await body() } }
        let trace = sink.decide(TraceContext(traceHigh: ids.next(), traceLow: ids.next(), spanID: ids.next()))
        guard trace.isSampled else { return await $current.withValue(nil) { await body() } }
        let attributes = attributes()
        let start = Span.now()
        let value = await $current.withValue(TraceScope(trace: trace, sink: sink)) { await body() }
        var span = Span(trace: trace, name: name, kind: .internal, start: start, end: Span.now(), attributes: attributes)
        if request.traceHigh | request.traceLow != 0 { span.links = [Span.Link(request)] }
        sink.record(span)
        return value
    }

    /// A new span under this one.
    public func child() -> TraceScope {
        var ids = TraceIDs()
        var trace = self.trace
        trace.parentID = trace.spanID
        trace.spanID = ids.next()
        return TraceScope(trace: trace, sink: sink)
    }
}

/// A span nothing records under (a parse, a queue wait), timed around the work by its caller:
/// no closure and no task-local scope of its own. `start()` is nil without a scope, so
/// untraced work pays one task-local read.
public struct LeafSpan: Sendable {
    let scope: TraceScope
    let start: UInt64

    public static func start() -> LeafSpan? { TraceScope.current.map { LeafSpan(scope: $0, start: Span.now()) } }

    /// Records it as a child of the scope it started in; `attributes` is evaluated only here.
    public func end(_ name: String, kind: Span.Kind = .internal, _ attributes: @autoclosure () -> [(String, Span.Value)], error: String? = nil) {
        var notes = SpanNotes(attributes())
        notes.error = error
        let child = scope.child()
        scope.sink.record(notes.span(child.trace, name, kind, start))
    }
}

/// What a span's body adds to it: attributes, an error, links.
public struct SpanNotes: Sendable {
    public var attributes: [(String, Span.Value)]
    public var error: String?
    public var links: [Span.Link] = []

    init(_ attributes: [(String, Span.Value)]) { self.attributes = attributes }

    public mutating func set(_ key: String, _ value: Span.Value) { attributes.append((key, value)) }

    func span(_ trace: TraceContext, _ name: String, _ kind: Span.Kind, _ start: UInt64) -> Span {
        var span = Span(trace: trace, name: name, kind: kind, start: start, end: Span.now(), attributes: attributes, error: error)
        span.links = links
        return span
    }
}

extension TraceContext {
    /// The W3C `sampled` flag.
    public var isSampled: Bool { flags & 1 == 1 }
}
