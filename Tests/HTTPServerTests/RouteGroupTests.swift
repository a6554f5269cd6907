import HTTPServer
import Primitives
import Synchronization
import Testing
@testable import HTTPServer

/// Route groups as Hummingbird 2 has them, driven through the router without a socket: a path
/// prefix, nesting, middleware added to a group (in order, around only the routes added after
/// it), and a group whose routes run over a narrower context that hands its parent back.
@Suite struct RouteGroupTests {
    struct Parent: RootRequestContext {
        let core: CoreRequestContext
        var trail: [String] = []
        init(core: CoreRequestContext) { self.core = core }
    }

    /// What a narrowing learned, as a field that is not optional.
    struct Member: ChildRequestContext {
        var parent: Parent
        let name: String
    }

    /// Who the member is, from a header (a guest without one).
    struct Membership: ContextNarrowing {
        func narrow(_ context: consuming Parent) -> Member {
            let name = context.request.headers["x-member"] ?? "guest"
            return Member(parent: context, name: name)
        }
    }

    /// Notes its label on the way in and on the way out, and at the end.
    struct Note<Context: RequestContext>: Middleware {
        let label: String
        let ends: Locked<[String]>
        let write: @Sendable (inout Context, String) -> Void

        func handle(_ context: inout Context, next: (inout Context) -> HandlerResult<Context>) -> HandlerResult<Context> {
            write(&context, "in:\(label)")
            let result = next(&context)
            write(&context, "out:\(label)")
            return result
        }

        func ended(_ context: Context, _ outcome: RequestOutcome) { ends.withLock { $0.append(label) } }
    }

    static func note(_ label: String, _ ends: Locked<[String]>) -> Note<Parent> { Note(label: label, ends: ends) { $0.trail.append($1) } }

    static func ok(_ text: String) -> HandlerResult<Parent> { .response(.json(Array(text.utf8))) }

    static func run(_ router: Router<Parent>, _ target: String, method: String = "GET") async -> (Parent, Response) {
        var context = Parent(core: .make(method: method, target: target))
        switch router.handle(&context) {
        case .response(let response): return (context, response)
        case .deferred(let work):
            let response = await work(&context)
            return (context, response)
        case .stream(let head, _): return (context, head)
        }
    }

    @Test func prefixesJoinAndGroupsNest() async {
        let ends = Locked<[String]>([])
        var router = Router<Parent>()
        router.group("/v1") { v1 in
            v1.get("/") { _ in Self.ok("root") }
            v1.get("podcasts/:id") { context in Self.ok("podcast \(context.pathParameters["id"] ?? "")") }
            v1.group("admin/") { admin in
                admin.add(middleware: Self.note("admin", ends))
                admin.post("reload") { _ in Self.ok("reloaded") }
            }
        }
        #expect(String(decoding: await Self.run(router, "/v1").1.body, as: UTF8.self) == "root")
        let (podcast, answer) = await Self.run(router, "/v1/podcasts/7")
        #expect(podcast.route == "/v1/podcasts/:id" && String(decoding: answer.body, as: UTF8.self) == "podcast 7")
        let (reload, reloaded) = await Self.run(router, "/v1/admin/reload", method: "POST")
        #expect(reload.route == "/v1/admin/reload" && reloaded.status == 200 && reload.trail == ["in:admin", "out:admin"])
        #expect(await Self.run(router, "/podcasts/7").0.route == "(unmatched)", "no route outside its prefix")
        #expect(await Self.run(router, "/v1/podcasts/7").0.trail.isEmpty, "a nested group's middleware stay in it")
    }

    /// `add(middleware:)` wraps the routes added after it only; the first added is the
    /// outermost; a nested group runs inside its parent's; ends unwind innermost first.
    @Test func middlewareAddedToAGroupWrapTheRoutesAddedAfterIt() async {
        let ends = Locked<[String]>([])
        var router = Router<Parent>()
        router.group("/g") { g in
            g.get("before") { _ in Self.ok("") }
            g.add(middleware: Self.note("outer", ends))
            g.add(middleware: Self.note("inner", ends))
            g.get("after") { context in
                context.trail.append("handler")
                return Self.ok("")
            }
            g.group("nested") { nested in
                nested.add(middleware: Self.note("nested", ends))
                nested.get("x") { _ in Self.ok("") }
            }
        }
        #expect(await Self.run(router, "/g/before").0.trail.isEmpty)
        let (after, _) = await Self.run(router, "/g/after")
        #expect(after.trail == ["in:outer", "in:inner", "handler", "out:inner", "out:outer"])
        router.ended(after, RequestOutcome(status: 200, bodyBytes: 0, durationSeconds: 0, loop: 0))
        #expect(ends.withLock { $0 } == ["inner", "outer"])
        let (nested, _) = await Self.run(router, "/g/nested/x")
        #expect(nested.trail == ["in:outer", "in:inner", "in:nested", "out:nested", "out:inner", "out:outer"])
    }

    /// A group over a narrower context: its routes read the narrowing's field as it is (no
    /// Optional), and what they write into the parent (now, in deferred work, before a stream)
    /// reaches the middleware outside the group; the group's own middleware run over the child.
    @Test func aNarrowerContextHandsItsParentBack() async {
        let ends = Locked<[String]>([])
        var router = Router<Parent>()
        router.use(Self.note("router", ends))
        router.group("/members", context: Member.self, narrowing: Membership()) { members in
            members.add(middleware: Note<Member>(label: "member", ends: ends) { $0.parent.trail.append("\($1):\($0.name)") })
            members.get("now") { context in
                context.parent.trail.append("now:\(context.name)")
                return .response(.json([]))
            }
            members.get("later") { context in
                .deferred { context in
                    context.parent.trail.append("later:\(context.name)")
                    return .json([])
                }
            }
        }
        var now = Parent(core: .make(target: "/members/now", headers: [("X-Member", "ada")]))
        _ = router.handle(&now)
        #expect(now.trail == ["in:router", "in:member:ada", "now:ada", "out:member:ada", "out:router"])
        var later = Parent(core: .make(target: "/members/later", headers: [("X-Member", "bo")]))
        guard case .deferred(let work) = router.handle(&later) else {
            Issue.record("deferred work stays deferred through the narrowing")
            return
        }
        _ = await work(&later)
        #expect(later.trail == ["in:router", "in:member:bo", "out:member:bo", "out:router", "later:bo"])
        router.ended(later, RequestOutcome(status: 200, bodyBytes: 0, durationSeconds: 0, loop: 0))
        #expect(ends.withLock { $0 } == ["member", "router"], "the child's middleware see the end, then the router's")
    }

    @Test func prefixAndPatternJoinWithOneSlash() {
        #expect(RouteGroup<Parent>.join("", "/a") == "/a")
        #expect(RouteGroup<Parent>.join("/v1/", "/a/:id/") == "/v1/a/:id")
        #expect(RouteGroup<Parent>.join("v1", "") == "/v1")
        #expect(RouteGroup<Parent>.join("", "") == "/")
    }
}
