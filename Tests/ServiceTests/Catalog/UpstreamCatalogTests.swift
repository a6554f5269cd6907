import Feeds
import Foundation
import TestSupport
import Testing
import Upstream
@testable import HTTPServer
@testable import Service

/// What is derived from the upstream declarations, checked for every declaration: a new
/// upstream is covered by these tests the moment it is added to `UpstreamCatalog.all`.
@Suite(.offPool) struct UpstreamCatalogTests {
    static func parse(_ environment: [String: String]) throws -> Configuration {
        guard case .run(let c) = try ConfigurationParser.parse(arguments: [], environment: environment) else {
            throw ConfigurationError(description: "not a run")
        }
        return c
    }

    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every route on: the image proxy needs its key, WebSub its key and public address, the demo page is on by default.
    static func services() throws -> Services {
        var c = Configuration()
        c.dataDirectory = nil  // no records file written by a unit test
        c[Setting.imageProxyKey] = "catalog-test"
        c[Setting.websubKey] = "catalog-test"
        c[Setting.publicBaseURL] = "https://feeds.example"
        return try Services(c, logLanes: 1)
    }

    /// Each route is declared once, and every enabled one is served by its declaration, in
    /// the declared order (the index's).
    @Test func everyDeclaredRouteIsServedOnceInOrder() throws {
        let declared = RouteDeclaration.all.map { "\($0.method) \($0.name.path)" }
        #expect(Set(declared).count == declared.count, "a route declared twice")
        let served = try App.handlers(try Self.services()).map { "\($0.method) \($0.route.path)" }
        #expect(served == declared, "every route is on with the image proxy key, WebSub's settings and the demo page")
        var c = Configuration()
        c.dataDirectory = nil  // no records file written by a unit test
        c.demoPage = false
        let bare = try App.handlers(try Services(c, logLanes: 1)).map { "\($0.method) \($0.route.path)" }
        #expect(bare == declared.filter { !["GET /images", "GET /hub/websub", "POST /hub/websub", "GET /demo", "GET /demo/:file"].contains($0) })
    }

    /// Every route's operation id and tag come from where it is declared (an upstream's
    /// declaration, or the operational routes' list), and every path in the document has one.
    @Test func theOpenAPIDocumentsOperationsAreTheDeclaredOnes() throws {
        let document = try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any]
        let paths = try #require(document?["paths"] as? [String: [String: [String: Any]]])
        let declared = RouteDeclaration.all.compactMap(\.operation)
        for operation in declared {
            let get = paths[operation.path]?[operation.methodKey]
            #expect(get != nil, "\(operation.method) \(operation.route.path) is not in the OpenAPI document")
            #expect(get?["operationId"] as? String == operation.id, "\(operation.path): operationId")
            #expect(get?["tags"] as? [String] == [operation.tag.name], "\(operation.path): tags")
        }
        #expect(Set(paths.keys) == Set(declared.map(\.path)), "a documented path no route declares, or the reverse")
        let tags = (document?["tags"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        var firstUsed: [String] = []
        for name in declared.map(\.tag.name) where !firstUsed.contains(name) { firstUsed.append(name) }
        #expect(tags == firstUsed, "every tag, once, in the order routes first use it")
        #expect(tags?.first == "Photos" && tags?.last == "Operations")
        #expect(OpenAPIDocument.problems().isEmpty, "\(OpenAPIDocument.problems())")
    }

    /// What the declarations' types alone do not rule out is found: a path, operation id or
    /// tag name used twice, a schema declared twice or referred to and declared nowhere.
    @Test func aDocumentThatContradictsItselfIsFound() throws {
        let podcasts = try #require(UpstreamCatalog.all.first { $0.source == SourceName.itunes })
        let noop: @Sendable (Services) -> MeteredHandler = { _ in { _ in .response(.error(status: 404, code: "not_found", message: "")) } }
        let again = RouteDeclaration(.podcasts, operation: "searchPodcasts", tag: OperationTag("Podcasts", "another"), described: ITunesAPI.search, noop)
        let problems = OpenAPIDocument.problems(routes: RouteDeclaration.all + [again], upstreams: UpstreamCatalog.all + [podcasts])
        #expect(problems.contains { $0.hasPrefix("more than one path: GET /podcasts") })
        #expect(problems.contains { $0.hasPrefix("more than one operationId: searchPodcasts") })
        #expect(problems.contains { $0.hasPrefix("more than one tag: Podcasts") })
        #expect(problems.contains { $0.hasPrefix("schemas declared twice: Podcast, PodcastFeed") })
        let withoutKiva = UpstreamCatalog.all.filter { $0.source != SourceName.kiva }
        #expect(
            OpenAPIDocument.problems(upstreams: withoutKiva) == [
                "schemas referred to but declared nowhere: #/components/schemas/LoanFeed, #/components/schemas/LoanItem"
            ])
    }

    /// The Swift files under `folder`, in its subfolders too (an upstream's files may have a folder).
    static func swiftFiles(under folder: URL) -> [URL] {
        var files: [URL] = []
        for case let file as URL in FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) ?? .init()
        where file.pathExtension == "swift" {
            files.append(file)
        }
        return files
    }

    /// Every upstream declared in `Catalog/` is in `UpstreamCatalog.all`: a declaration the list
    /// leaves out would compile and be served by nothing, with no test of its own failing.
    @Test func everyDeclaredUpstreamIsInTheCatalog() throws {
        let catalog = Self.repositoryRoot.appendingPathComponent("Sources/Service/Catalog")
        let files = Self.swiftFiles(under: catalog)
        var declared: [String] = []
        // Written any way Swift allows: `= UpstreamDeclaration(`, `: UpstreamDeclaration = .init(`, `= Self(` …
        let declaration = try Regex(
            #"static\s+(?:let|var)\s+(\w+)\s*(?::\s*(?:UpstreamDeclaration|Self)\s*)?=\s*(?:UpstreamDeclaration|Self)?(?:\.init)?\s*\("#)
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: declaration) {
                let written = text[match.range]
                guard let name = match.output[1].substring.map(String.init), ["UpstreamDeclaration", "Self", ".init"].contains(where: written.contains)
                else { continue }
                declared.append(name)
            }
        }
        let list =
            try String(contentsOf: catalog.appendingPathComponent("UpstreamCatalog.swift"), encoding: .utf8)
            .split(separator: "\n").first { $0.contains("static let all: [UpstreamDeclaration] = [") } ?? ""
        #expect(declared.count == UpstreamCatalog.all.count, "declared in Catalog/: \(declared.sorted()); listed: \(UpstreamCatalog.sources)")
        for name in declared { #expect(list.contains(".\(name),") || list.contains(".\(name)]"), "UpstreamCatalog.all does not list .\(name)") }
    }

    /// No part of a declaration is empty in silence: its endpoints are settings or a reason
    /// (`.none(because:)`, printed by --help beside the rate budgets' reasons), and it has
    /// settings and routes (a declaration with none serves nothing and tunes nothing).
    @Test func everyUpstreamHasEndpointsSettingsAndRoutesOrSaysWhy() {
        let help = ConfigurationParser.helpText()
        for upstream in UpstreamCatalog.all {
            if case .none(let reason) = upstream.endpoints {
                #expect(reason.count >= 20, "\(upstream.source): a reason, not a word: \(reason)")
                #expect(help.contains("  \(upstream.source): \(reason)"), "--help gives \(upstream.source)'s reason for no endpoint")
            }
            #expect(!upstream.settings.isEmpty, "\(upstream.source) declares no setting")
            #expect(!upstream.routes.isEmpty, "\(upstream.source) declares no route")
        }
        #expect(UpstreamCatalog.all.contains { $0.endpoints.all.isEmpty } && UpstreamCatalog.all.contains { !$0.endpoints.all.isEmpty })
    }

    /// Every adapter a declaration builds has tests of its own (Tests/FeedsTests names it): the
    /// declaration tests here check the wiring, not what the adapter makes of its upstream.
    @Test func everyAdapterHasTestsOfItsOwn() throws {
        let root = Self.repositoryRoot
        var tests = ""
        let feedsTests = root.appendingPathComponent("Tests/FeedsTests")
        for case let file as URL in FileManager.default.enumerator(at: feedsTests, includingPropertiesForKeys: nil) ?? .init()
        where file.pathExtension == "swift" {
            tests += (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        }
        var adapters: Set<String> = []
        let catalog = root.appendingPathComponent("Sources/Service/Catalog")
        for file in Self.swiftFiles(under: catalog) where file.lastPathComponent.hasSuffix("Upstream.swift") {
            let text = try String(contentsOf: file, encoding: .utf8)
            for word in text.split(whereSeparator: { !$0.isLetter && !$0.isNumber }) where word.hasSuffix("Adapter") && word.first?.isUppercase == true {
                adapters.insert(String(word))
            }
        }
        #expect(adapters.count >= 6, "\(adapters.sorted())")
        for adapter in adapters.sorted() {
            #expect(tests.contains("\(adapter)("), "no test in Tests/FeedsTests builds \(adapter)")
        }
    }

    /// Each upstream's adapter is tested on what it makes of its recorded answers: some test
    /// reads one of the answers its fuzz entry names and asserts on the model it gets (three
    /// `#expect`s comparing values at least). A test that only builds the adapter, or asserts
    /// nothing of the model, does not count.
    @Test func everyUpstreamsAdapterIsTestedOnItsModel() throws {
        var tests: [String] = []
        for folder in ["Tests/FeedsTests", "Tests/ImagesTests"] {
            let directory = Self.repositoryRoot.appendingPathComponent(folder)
            for case let file as URL in FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) ?? .init()
            where file.pathExtension == "swift" {
                // A test's body: from its `@Test` to the next.
                tests += ((try? String(contentsOf: file, encoding: .utf8)) ?? "").components(separatedBy: "@Test").dropFirst()
            }
        }
        for upstream in UpstreamCatalog.all {
            let answers = upstream.fuzz.recorded.flatMap { [$0, String($0.split(separator: "/").last ?? "")] }
            let asserting = tests.filter { body in
                answers.contains { body.contains("\"\($0)\"") }
                    && body.split(separator: "\n").filter { $0.contains("#expect(") && $0.contains("==") }.count >= 3
            }
            #expect(!asserting.isEmpty, "no test reads \(upstream.source)'s recorded answers (\(upstream.fuzz.recorded)) and asserts on the model it makes")
        }
    }

    /// docs/adding-an-upstream.md tells what catches each part left out by naming tests: each
    /// of them exists (a renamed test would leave the walk-through pointing at nothing).
    @Test func theWalkThroughNamesOnlyTestsThatExist() throws {
        let root = Self.repositoryRoot
        let page = try String(contentsOf: root.appendingPathComponent("docs/adding-an-upstream.md"), encoding: .utf8)
        // What is between backticks (split on them, the odd pieces).
        let named = Set(page.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
        var sources = ""
        for case let file as URL in FileManager.default.enumerator(at: root.appendingPathComponent("Tests"), includingPropertiesForKeys: nil) ?? .init()
        where file.pathExtension == "swift" {
            sources += (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        }
        let tests = named.filter { $0.first?.isLowercase == true && $0.allSatisfy { $0.isLetter || $0.isNumber } && $0.count > 20 }
        #expect(tests.count >= 8, "the walk-through names its tests: \(tests.sorted())")
        for name in tests { #expect(sources.contains("func \(name)("), "docs/adding-an-upstream.md names \(name), which no test defines") }
    }

    /// `make fuzz` reaches every upstream through its declaration's entry: each runs over the
    /// recorded answers (every folder of Fixtures/) and over garbage, and finds nothing.
    @Test func everyUpstreamsFuzzEntryRunsOverTheRecordedAnswers() throws {
        let fixtures = Self.repositoryRoot.appendingPathComponent("Fixtures")
        var inputs: [[UInt8]] = [[], Array("{".utf8), Array("<rss><channel><item>".utf8), [0xFF, 0xD8, 0xFF, 0x00]]
        for case let file as URL in FileManager.default.enumerator(at: fixtures, includingPropertiesForKeys: nil) ?? .init()
        where (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true && !file.path.contains("/artwork/") {
            inputs.append(Array(try Data(contentsOf: file).prefix(60_000)))
        }
        #expect(inputs.count > 20)
        for upstream in UpstreamCatalog.all {
            for input in inputs {
                #expect(UpstreamCatalog.fuzz(input, source: upstream.source) == nil, "\(upstream.source)")
            }
        }
        #expect(UpstreamCatalog.fuzzEntries(excluding: [SourceName.images]).count == UpstreamCatalog.all.count - 1)
    }

    /// Each fuzz entry reads its own upstream's recorded answers as items: an entry that reads
    /// nothing (`{ _ in FuzzRun() }`) would leave `make fuzz` exercising none of the adapter.
    @Test func everyUpstreamsFuzzEntryReadsItsOwnRecordedAnswers() throws {
        let fixtures = Self.repositoryRoot.appendingPathComponent("Fixtures")
        for upstream in UpstreamCatalog.all {
            #expect(!upstream.fuzz.recorded.isEmpty, "\(upstream.source): name the recorded answers its fuzz entry reads")
            for name in upstream.fuzz.recorded {
                let run = upstream.fuzz.run(Array(try Data(contentsOf: fixtures.appendingPathComponent(name))))
                #expect(run.items > 0 && run.finding == nil, "\(upstream.source): Fixtures/\(name) read as \(run.items) items, \(run.finding ?? "no finding")")
            }
            #expect(upstream.fuzz.run(Array("{}".utf8)).items == 0, "\(upstream.source): an empty object is no answer")
        }
    }

    /// Two replicas with different upstream URLs must not share cache entries.
    @Test func everyEndpointShapesTheSharedCacheFingerprint() throws {
        let base = SchemaFingerprint.compute(Configuration())
        for endpoint in UpstreamCatalog.all.flatMap(\.endpoints.all) {
            let moved = try Self.parse([endpoint.option.env: "https://elsewhere.example/api"])
            #expect(SchemaFingerprint.compute(moved) != base, "\(endpoint.option.env) does not change the fingerprint")
        }
    }

    /// `--fixtures` must never reach the internet: every endpoint, optional ones once set.
    @Test func fixtureModePointsEveryEndpointAtTheFixtureUpstream() throws {
        let fixtures = "http://127.0.0.1:9"
        var everySet = try Self.parse(
            Dictionary(uniqueKeysWithValues: UpstreamCatalog.all.flatMap(\.endpoints.all).map { ($0.option.env, "https://real.example/api") }))
        everySet.pointUpstreams(atFixtures: fixtures)
        for endpoint in UpstreamCatalog.all.flatMap(\.endpoints.all) {
            #expect(endpoint.value(everySet) == fixtures + endpoint.fixturePath, "\(endpoint.option.env) is not pointed at the fixtures")
        }
        var defaults = Configuration()
        defaults.pointUpstreams(atFixtures: fixtures)
        for endpoint in UpstreamCatalog.all.flatMap(\.endpoints.all) where endpoint.isOptional {
            #expect(endpoint.value(defaults) == nil, "\(endpoint.option.env) was switched on by --fixtures")
        }
        // Fixture replicas share one fingerprint whichever port their fixture upstream has.
        var other = Configuration()
        other.pointUpstreams(atFixtures: "http://127.0.0.1:10")
        #expect(SchemaFingerprint.compute(defaults) == SchemaFingerprint.compute(other))
    }

    /// Replicas started beside a `--fixtures` one are pointed at its fixture upstream with
    /// one flag (the scripts do), whatever endpoint settings they were given.
    @Test func fixturesUpstreamPointsEveryEndpointAtAnotherProcesssFixtures() throws {
        guard
            case .run(let c) = try ConfigurationParser.parse(
                arguments: ["--fixtures-upstream", "http://127.0.0.1:9"], environment: ["FLICKR_FEED_URL": "https://real.example/feed"])
        else { throw ConfigurationError(description: "not a run") }
        for endpoint in UpstreamCatalog.all.flatMap(\.endpoints.all) where !endpoint.isOptional {
            #expect(endpoint.value(c) == "http://127.0.0.1:9" + endpoint.fixturePath)
        }
        var fixtures = Configuration()
        fixtures.pointUpstreams(atFixtures: "http://127.0.0.1:10")
        // The same fingerprint as the --fixtures replica whose upstream it uses: they share Redis entries.
        #expect(SchemaFingerprint.compute(c) == SchemaFingerprint.compute(fixtures))
        #expect(throws: ConfigurationError.self) { try ConfigurationParser.parse(arguments: ["--fixtures-upstream", "ftp://x"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try ConfigurationParser.parse(arguments: ["--fixtures-upstream"], environment: [:]) }
    }

    /// Every upstream's budget is a choice: a published limit reaches the upstream client's
    /// budget and fair queue; none says why, where operators read the settings.
    @Test func everyRateLimitReachesTheUpstreamClientsBudget() throws {
        let limited = UpstreamCatalog.all.filter { $0.rateLimit.published != nil }
        #expect(!limited.isEmpty)
        for upstream in limited {
            let env = try #require(upstream.rateLimit.published?.option.env)
            let c = try Self.parse([env: "7"])
            #expect(UpstreamConfiguration(c).ratePerMinute[upstream.source] == 7, "\(env) is accepted and ignored")
        }
        #expect(Set(UpstreamConfiguration(Configuration()).ratePerMinute.keys) == Set(limited.map(\.source)))
        let help = ConfigurationParser.helpText()
        for upstream in UpstreamCatalog.all {
            guard case .none(let reason) = upstream.rateLimit else { continue }
            #expect(reason.count >= 20, "\(upstream.source): say why nobody's budget is spent")
            #expect(help.contains("\n  \(upstream.source): \(reason)"), "\(upstream.source): --help does not say why it has no budget")
        }
    }

    /// Every operation has its part of docs/API.md: a heading (`## \`GET /path…`) for an
    /// upstream's route, a bullet (`- \`GET /path\``) under Operations for the others.
    @Test func everyOperationHasADocsSection() throws {
        let page = try String(contentsOf: Self.repositoryRoot.appendingPathComponent("docs/API.md"), encoding: .utf8)
        let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let document = try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any]
        let paths = try #require(document?["paths"] as? [String: [String: [String: Any]]])
        /// The text a heading or list item opens: a heading's lines up to the next heading of
        /// its level or above, a list item's own line.
        func section(_ method: String, _ path: String) -> String? {
            let name = "`\(method) \(path)"
            guard
                let at = lines.firstIndex(where: { line in
                    guard line.hasPrefix("## \(name)") || line.hasPrefix("### \(name)") || line.hasPrefix("- \(name)") else { return false }
                    let after = line.dropFirst(line.prefix { $0 != "`" }.count + name.count).first
                    return after == "`" || after == "?" || after == " "
                })
            else { return nil }
            guard lines[at].hasPrefix("#") else { return lines[at] }
            let level = lines[at].prefix { $0 == "#" }.count
            let end = lines[(at + 1)...].firstIndex { $0.hasPrefix("#") && $0.prefix { $0 == "#" }.count <= level } ?? lines.count
            return lines[at..<end].joined(separator: "\n")
        }
        for operation in RouteDeclaration.all.compactMap(\.operation) {
            guard let text = section(operation.method, operation.path) else {
                Issue.record("docs/API.md has no section for \(operation.path) (\(operation.id)): a heading `## `\(operation.method) \(operation.path)` — …")
                continue
            }
            let body = text.split(separator: "\n").dropFirst().filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            #expect(!body.isEmpty || text.hasPrefix("- "), "docs/API.md's section for \(operation.method) \(operation.path) is a heading alone")
            // Its parameters, each named: `name`, {name} or name=. A POST section that points to
            // the GET of its path (a form of the same parameters) may leave them to that one.
            let described = paths[operation.path]?[operation.methodKey]
            // (Header parameters are the shared ones: X-Request-ID, If-None-Match … in their own sections.)
            var names = (described?["parameters"] as? [[String: Any]] ?? []).filter { ["query", "path"].contains($0["in"] as? String) }
                .compactMap { $0["name"] as? String }
            let form =
                (((described?["requestBody"] as? [String: Any])?["content"] as? [String: Any])?["application/x-www-form-urlencoded"] as? [String: Any])?[
                    "schema"] as? [String: Any]
            names += (form?["properties"] as? [String: Any]).map { Array($0.keys) } ?? []
            let borrowed = operation.method == "POST" && text.contains("`GET \(operation.path)") ? section("GET", operation.path) ?? "" : ""
            for name in Set(names) {
                let named = ["`\(name)`", "{\(name)}", "\(name)=", "`\(name)="].contains { text.contains($0) || borrowed.contains($0) }
                #expect(named, "docs/API.md's section for \(operation.method) \(operation.path) does not name its parameter \(name)")
            }
        }
    }

    /// Every setting the services and routes read is one an option parses: a setting left out
    /// of its upstream's `settings` would keep its default, missing from --help and the docs.
    @Test func everySettingTheRoutesReadIsAnOption() throws {
        // Every route built and asked here: a setting read only while a request is answered is
        // heard whatever ran before.
        _ = try App.handlers(try Self.services())
        _ = try Self.askEveryRoute()
        let parsed = Set(ConfigurationParser.options.map { $0.keyPath as AnyKeyPath })
        #expect(SettingReads.all.count >= 10)
        for keyPath in SettingReads.all.subtracting(parsed) { Issue.record("read, but no option parses it: \(keyPath)") }
    }

    /// What one route was asked and what it read: a route asked by `askEveryRoute`.
    struct Asked {
        let route: RouteDeclaration
        /// The parameters its API description declares (query, path, form fields).
        let described: Set<String>
        let reads: QueryReads
    }

    /// Every route on (the image proxy and WebSub too), asked through its handler as the router
    /// runs it, with its required parameters' examples (its description's own) in the query, the
    /// path or a form, while the names it reads and the feeds it prepares are listened to.
    static func askEveryRoute() throws -> [Asked] {
        var c = Configuration()
        c.dataDirectory = nil  // no records file written by a unit test
        c[Setting.imageProxyKey] = "catalog-test"
        c[Setting.websubKey] = "catalog-test"
        c[Setting.publicBaseURL] = "https://feedproxy.example"
        c.pointUpstreams(atFixtures: "http://127.0.0.1:9")
        let services = try Services(c, logLanes: 1)
        let handlers = try App.handlers(services)
        let document = try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json.utf8)) as? [String: Any]
        let paths = try #require(document?["paths"] as? [String: [String: [String: Any]]])
        var asked: [Asked] = []
        for route in RouteDeclaration.all {
            guard let operation = route.operation,
                let handler = handlers.first(where: { $0.route.path == route.name.path && $0.method == route.method })?.handler.served(services)
            else { continue }
            let described = paths[operation.path]?[operation.methodKey]
            var parameters = (described?["parameters"] as? [[String: Any]] ?? []).filter { ["query", "path"].contains($0["in"] as? String) }
            // A form's fields are its parameters, sent in the body.
            let form = ((described?["requestBody"] as? [String: Any])?["content"] as? [String: Any])?["application/x-www-form-urlencoded"] as? [String: Any]
            if let schema = form?["schema"] as? [String: Any], let properties = schema["properties"] as? [String: [String: Any]] {
                let required = schema["required"] as? [String] ?? []
                for (name, property) in properties {
                    parameters.append(["name": name, "in": "query", "required": required.contains(name), "example": property["example"] ?? "1200361736"])
                }
            }
            func example(_ parameter: [String: Any]) -> String { parameter["example"].map { "\($0)" } ?? "" }
            var pathParameters: [String: String] = [:]
            var target = route.name.path
            for parameter in parameters where parameter["in"] as? String == "path" {
                let name = parameter["name"] as? String ?? ""
                pathParameters[name] = example(parameter)
                target = target.replacingOccurrences(of: ":\(name)", with: example(parameter))
            }
            let query = parameters.filter { $0["in"] as? String == "query" && $0["required"] as? Bool == true }
                .map { "\($0["name"] as? String ?? "")=\(example($0).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
            let isForm = form != nil
            if !query.isEmpty && !isForm { target += "?" + query.joined(separator: "&") }
            let reads = QueryReads()
            QueryParameters.$reads.withValue(reads) {
                var context = AppRequestContext.make(
                    method: route.method, target: target, headers: isForm ? [("Content-Type", "application/x-www-form-urlencoded")] : [],
                    body: isForm ? Array(query.joined(separator: "&").utf8) : [], pathParameters: pathParameters)
                _ = handler(&context)
            }
            asked.append(Asked(route: route, described: Set(parameters.compactMap { $0["name"] as? String }), reads: reads))
        }
        return asked
    }

    /// Every query or path parameter a route reads is one its API description declares: a
    /// parameter parsed but not described is missing from the document and every generated
    /// client. Each route is asked with its required parameters' examples (the description's
    /// own), and the names its handler reads are listened to.
    @Test func everyParameterARouteReadsIsInItsAPIDescriptionAndItsFeedIsItsDeclarations() throws {
        var checked = 0
        var preparedBy = Set<String>()
        for asked in try Self.askEveryRoute() {
            let (route, reads) = (asked.route, asked.reads)
            for name in reads.names.subtracting(asked.described) {
                Issue.record("\(route.method) \(route.name.path) reads \(name), which its API description does not declare")
            }
            if !reads.names.isEmpty { checked += 1 }
            // The feed it prepared is its declaration's: counted under its source, and its request
            // budgeted and queued as that upstream (another name runs with no rate budget, no
            // fair queue of its own and no cache counters, and nothing else fails).
            let declaration = UpstreamCatalog.all.first { $0.routes.contains { $0.name == route.name && $0.method == route.method } }
            for named in reads.prepared {
                let source = declaration?.source ?? "(none)"
                #expect(named.source == source, "\(route.method) \(route.name.path) counts its answers under \(named.source), declared by \(source)")
                // One with no endpoint of its own (podcast feeds: the publishers', found by an iTunes
                // lookup) may begin at another declared upstream's.
                let borrowed = declaration?.endpoints.all.isEmpty == true && UpstreamCatalog.sources.contains(named.upstream)
                #expect(
                    named.upstream == source || borrowed, "\(route.method) \(route.name.path) asks its upstream as \(named.upstream), declared as \(source)")
                preparedBy.insert(source)
            }
        }
        #expect(checked >= 8, "routes whose reads were heard")
        #expect(preparedBy.isSuperset(of: [SourceName.flickr, SourceName.itunes, SourceName.kiva]), "routes whose prepared feed was compared: \(preparedBy)")
    }

    @Test func everyUpstreamIsCountedInTheMetrics() throws {
        let services = try Self.services()
        for source in UpstreamCatalog.sources {
            #expect(services.metrics.caches[source] != nil, "no cache counters for \(source)")
        }
    }

    @Test func everyUpstreamSettingIsParsedAndDocumentedOnce() {
        let envs = ConfigurationParser.options.map(\.env)
        #expect(Set(envs).count == envs.count)
        let help = ConfigurationParser.helpText()
        for option in UpstreamCatalog.all.flatMap(\.options) { #expect(help.contains("(\(option.env))")) }
    }

    @Test func theFixtureEnvironmentNamesEveryRequiredEndpoint() {
        let env = UpstreamCatalog.fixtureEnvironment(baseURL: "http://127.0.0.1:9")
        #expect(env["FLICKR_FEED_URL"] == "http://127.0.0.1:9/services/feeds/photos_public.gne")
        #expect(env["KIVA_LOANS_URL"] == nil)  // optional: it switches Kiva to its REST API
        #expect(env.count == UpstreamCatalog.all.flatMap(\.endpoints.all).filter { !$0.isOptional }.count)
    }
}
