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

    // By index in a while loop, not `for m in` (a retain and a release of each middleware per
    // request) nor `indices` (generic stride code, not specialised here).

    /// In order; the first answer stops the chain.
    func prepare(_ context: inout RequestContext) -> Response? {
        var i = 0
        while i < preparing.count {
            if let answer = preparing[i].prepare(&context) { return answer }
            i += 1
        }
        return nil
    }

    func appendHeaderLines(for response: Response, in context: RequestContext, into out: inout OutputQueue) {
        var i = 0
        while i < headerWriters.count {
            out.append(contentsOf: headerWriters[i].headerLines(for: response, in: context))
            i += 1
        }
    }

    func completed(_ context: RequestContext, _ outcome: RequestOutcome) {
        var i = 0
        while i < completing.count {
            completing[i].completed(context, outcome)
            i += 1
        }
    }
}
