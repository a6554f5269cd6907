import HTTPServer

/// FeedProxy's router as the server's responder: a final class of this module, so the
/// router's inlinable code (routing, the middleware chains, the end) is specialised here for
/// `AppRequestContext`, where a generic `RouterResponder` would run it unspecialised.
final class AppResponder: Responder {
    let router: Router<AppRequestContext>

    init(_ router: Router<AppRequestContext>) { self.router = router }

    func respond(to core: CoreRequestContext, output: borrowing ResponseOutput) -> DeferredResponse? {
        router.respond(to: core, output: output)
    }

    func refuse(_ core: CoreRequestContext, with answer: Response, output: borrowing ResponseOutput) {
        router.refuse(core, with: answer, output: output)
    }
}
