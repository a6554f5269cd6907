import Feeds

extension UpstreamDeclaration {
    /// Kiva's fundraising loans, over GraphQL or (when `KIVA_LOANS_URL` is set) its legacy
    /// REST API: `/loans` and `/loans/{id}`.
    static let kiva = UpstreamDeclaration(
        source: SourceName.kiva,
        endpoints: .at(
            UpstreamEndpoint("--kiva-graphql-url", "KIVA_GRAPHQL_URL", \.[Setting.kivaGraphQLURL], fixturePath: "/graphql", "Kiva GraphQL endpoint"),
            UpstreamEndpoint(
                "--kiva-loans-url", "KIVA_LOANS_URL", \.[Setting.kivaLoansURL], fixturePath: "/v1/loans/newest.json",
                "when set, use Kiva's legacy REST newest-loans endpoint instead of GraphQL")),
        rateLimit: .published(
            RateLimitSetting(
                "--rate-limit-kiva", "RATE_LIMIT_KIVA_PER_MIN", \.[Setting.rateKivaPerMinute], "Kiva requests per minute (60 unregistered)")),
        settings: [Option("--cache-ttl-loans", "CACHE_TTL_LOANS", \.[Setting.ttlLoans], .seconds(), "seconds /loans stays fresh")],
        routes: [
            RouteDeclaration(.loans, operation: "listLoans", tag: .loans, described: KivaAPI.loans) { s in
                s.feedRoute(KivaAdapter(api: kivaAPI(s.configuration)), ttl: s.configuration[Setting.ttlLoans]).handle
            },
            RouteDeclaration(.loan, operation: "getLoan", tag: .loans, described: KivaAPI.loan) { s in
                s.feedRoute(KivaLoanAdapter(api: kivaAPI(s.configuration)), ttl: s.configuration[Setting.ttlLoans]).handle
            },
        ],
        schemas: KivaAPI.schemas,
        fuzz: FuzzEntry(reading: ["kiva/graphql.json", "kiva/newest.json"]) { KivaAdapter.fuzz($0) })

    private static func kivaAPI(_ c: Configuration) -> KivaAdapter.API {
        c[Setting.kivaLoansURL].map { .rest(url: $0) } ?? .graphQL(url: c[Setting.kivaGraphQLURL])
    }
}

extension OperationTag {
    static let loans = OperationTag("Loans", "Kiva's fundraising loans")
}

extension RouteName {
    static let loans = RouteName("/loans")
    static let loan = RouteName("/loans/:id")
}

extension Setting {
    static let kivaGraphQLURL = SettingKey(default: "https://gateway.production.kiva.org/graphql")
    static let kivaLoansURL = SettingKey<String?>(default: nil)
    static let ttlLoans = SettingKey(default: 300.0)
    static let rateKivaPerMinute = SettingKey(default: 60.0)
}
