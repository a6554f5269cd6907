/// The application's middleware in order, split by phase once at startup: a request walks
/// only the lists of the phases someone takes part in.
struct MiddlewareChain: Sendable {
    private let preparing: [any Middleware]
    private let headerWriters: [any Middleware]
    private let completing: [any Middleware]

    init(_ middleware: [any Middleware]) {
        preparing = middleware.filter { $0.phases.contains(.prepare) }
        headerWriters = middleware.filter { $0.phases.contains(.headerLines) }
        completing = middleware.filter { $0.phases.contains(.completed) }
    }

    /// In order; the first answer stops the chain.
    func prepare(_ context: inout RequestContext) -> Response? {
        for m in preparing {
            if let answer = m.prepare(&context) { return answer }
        }
        return nil
    }

    func appendHeaderLines(for response: Response, in context: RequestContext, into out: inout OutputQueue) {
        for m in headerWriters { out.append(contentsOf: m.headerLines(for: response, in: context)) }
    }

    func completed(_ record: RequestRecord) {
        for m in completing { m.completed(record) }
    }
}
