import HTTPServer
import TestSupport
import Testing
@testable import Service

/// Which context each route runs over: client identity and the miss quota (a
/// `MeteredRequestContext`, made by the router's metered group) on the routes an upstream
/// declares, the only ones that can cost one; a health probe, the document, the demo page or
/// a 404 never meet them.
@Suite(.offPool) struct AppRouterTests {
    @Test func identityAndQuotaRunOnlyOnTheRoutesThatCanCostAnUpstream() throws {
        let services = try UpstreamCatalogTests.services()
        let router = try App.router(services)
        let upstreams = Set(UpstreamCatalog.all.flatMap(\.routes).map { "\($0.method) \($0.name.path)" })
        var checked = 0
        for route in try App.handlers(services) {
            let name = "\(route.method) \(route.route.path)"
            switch route.handler {
            case .metered: #expect(upstreams.contains(name), "\(name) is metered, and no upstream declares it")
            case .open: #expect(!upstreams.contains(name), "\(name) is declared by an upstream, and runs without the quota")
            }
            // Through the whole router, as a request: the handler's answer is not run.
            let target = route.route.path.split(separator: "/").map { $0.hasPrefix(":") ? "1" : String($0) }.joined(separator: "/")
            var context = AppRequestContext.make(method: route.method, target: "/" + target)
            _ = router.handle(&context)
            #expect(context.route == route.route.path, "\(name) is routed to its own handler")
            checked += 1
        }
        #expect(checked > 20 && upstreams.count > 15)
        var missing = AppRequestContext.make(target: "/no/such/path")
        _ = router.handle(&missing)
        #expect(missing.route == "(unmatched)" && missing.client == nil)
    }
}
