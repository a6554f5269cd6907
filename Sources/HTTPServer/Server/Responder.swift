/// The application as the event loops see it: one call per request, on the loop. The server
/// knows nothing of the application's context or middleware; a `Router` does, and a
/// responder is where its code is specialised for the context (`RouterResponder`).
public protocol Responder: AnyObject, Sendable {
    /// Answers now through `output` (and tells its middleware of the end), or returns the
    /// work that answers later, off the loop.
    func respond(to core: CoreRequestContext, output: borrowing ResponseOutput) -> DeferredResponse?
    /// A request the server answers itself (`answer`, the connection closes after it): written
    /// through `output` once the application's middleware have seen it.
    func refuse(_ core: CoreRequestContext, with answer: Response, output: borrowing ResponseOutput)
}

/// Work that answers a request later: the server runs it on a Task, writes its answer on the
/// connection's loop and then calls the answer's `ended`; if the client leaves first, it
/// cancels the Task and calls `abandoned` (`499`) instead. Exactly one of the two is called.
public struct DeferredResponse: Sendable {
    public let work: @Sendable () async -> DeferredAnswer
    public let abandoned: @Sendable (RequestOutcome) -> Void
    /// When the request came (monotonic seconds): an abandoned one's duration runs from it.
    public let receivedAt: Double

    public init(
        work: @escaping @Sendable () async -> DeferredAnswer, abandoned: @escaping @Sendable (RequestOutcome) -> Void, receivedAt: Double
    ) {
        self.work = work
        self.abandoned = abandoned
        self.receivedAt = receivedAt
    }
}

/// What deferred work answered: the response, the request it is written for, and who is told
/// how the writing ended.
public struct DeferredAnswer: Sendable {
    public let response: Response
    public let core: CoreRequestContext
    public let ended: @Sendable (RequestOutcome) -> Void

    public init(response: Response, core: CoreRequestContext, ended: @escaping @Sendable (RequestOutcome) -> Void) {
        self.response = response
        self.core = core
        self.ended = ended
    }
}

/// A router as the server's responder. Generic: its calls from the loop run the router's
/// code unspecialised, which suits tests and the fixture upstream; an application whose hit
/// path counts declares its own final class that calls the same two methods, so the router's
/// code is specialised for its context in its module.
public final class RouterResponder<Context: RootRequestContext>: Responder {
    let router: Router<Context>

    public init(_ router: Router<Context>) { self.router = router }

    public func respond(to core: CoreRequestContext, output: borrowing ResponseOutput) -> DeferredResponse? {
        router.respond(to: core, output: output)
    }

    public func refuse(_ core: CoreRequestContext, with answer: Response, output: borrowing ResponseOutput) {
        router.refuse(core, with: answer, output: output)
    }
}
