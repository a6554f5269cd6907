import Feeds

extension UpstreamDeclaration {
    /// Kiva's fundraising loans, over GraphQL or (when `KIVA_LOANS_URL` is set) its legacy
    /// REST API: `/loans` and `/loans/{id}`.
    static let kiva = UpstreamDeclaration(
        source: SourceName.kiva,
        endpoints: [
            UpstreamEndpoint("--kiva-graphql-url", "KIVA_GRAPHQL_URL", \.kivaGraphQLURL, fixturePath: "/graphql", "Kiva GraphQL endpoint"),
            UpstreamEndpoint(
                "--kiva-loans-url", "KIVA_LOANS_URL", \.kivaLoansURL, fixturePath: "/v1/loans/newest.json",
                "when set, use Kiva's legacy REST newest-loans endpoint instead of GraphQL"),
        ],
        rateLimit: RateLimitSetting("--rate-limit-kiva", "RATE_LIMIT_KIVA_PER_MIN", \.rateKivaPerMinute, "Kiva requests per minute (60 unregistered)"),
        settings: [Option("--cache-ttl-loans", "CACHE_TTL_LOANS", \.ttlLoans, .seconds(), "seconds /loans stays fresh")],
        routes: [
            RouteDeclaration(.loans, operation: "listLoans", tag: .loans) { s in
                s.feedRoute(KivaAdapter(api: kivaAPI(s.configuration)), ttl: s.configuration.ttlLoans).handle
            },
            RouteDeclaration(.loan, operation: "getLoan", tag: .loans) { s in
                s.feedRoute(KivaLoanAdapter(api: kivaAPI(s.configuration)), ttl: s.configuration.ttlLoans).handle
            },
        ],
        fuzz: { KivaAdapter.fuzz($0) })

    private static func kivaAPI(_ c: Configuration) -> KivaAdapter.API {
        c.kivaLoansURL.map { .rest(url: $0) } ?? .graphQL(url: c.kivaGraphQLURL)
    }
}

extension RouteName {
    static let loans = RouteName("/loans")
    static let loan = RouteName("/loans/:id", listedAs: "/loans/{id}")
}
