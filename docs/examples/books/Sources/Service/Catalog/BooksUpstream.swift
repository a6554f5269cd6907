import Feeds

extension UpstreamDeclaration {
    /// Open Library's editions by their id: `/books/{id}`, and `POST /books` for several.
    static let books = UpstreamDeclaration(
        source: SourceName.books,
        endpoints: .at(
            UpstreamEndpoint("--books-api-url", "BOOKS_API_URL", \.[Setting.booksAPIURL], fixturePath: "/books/api/books", "Open Library Books API endpoint")),
        rateLimit: .published(
            RateLimitSetting("--rate-limit-books", "RATE_LIMIT_BOOKS_PER_MIN", \.[Setting.rateBooksPerMinute], "Open Library requests per minute")),
        settings: [Option("--cache-ttl-books", "CACHE_TTL_BOOKS", \.[Setting.ttlBooks], .seconds(), "seconds a book answer stays fresh")],
        routes: [
            RouteDeclaration(.book, operation: "getBook", tag: .books, described: bookOperation) { s in
                s.feedRoute(BooksAdapter(url: s.configuration[Setting.booksAPIURL], asking: .one), ttl: s.configuration[Setting.ttlBooks]).handle
            },
            RouteDeclaration(.books, method: "POST", operation: "lookUpBooks", tag: .books, described: lookUpOperation) { s in
                s.feedRoute(BooksAdapter(url: s.configuration[Setting.booksAPIURL], asking: .several), ttl: s.configuration[Setting.ttlBooks])
                    .handleForm
            },
        ],
        schemas: [
            "Book": .closedObject([
                "id": ["type": "string"], "title": .nullable("string"), "authors": ["type": "array", "items": ["type": "string"]],
                "published": .nullable("string"), "pages": .orNull(["type": "integer", "minimum": 1]), "coverUrl": .nullable("string"),
                "url": .nullable("string"),
            ]),
            "BookList": .envelope(items: .ref("Book"), source: "books", page: nil),
        ],
        fuzz: FuzzEntry(reading: ["books/editions.json"]) { BooksAdapter.fuzz($0) })

    private static let bookOperation = OpenAPIValue.feedOperation(
        "One edition by its Open Library id", answers: "BookList",
        [
            [
                "name": "id", "in": "path", "required": true, "description": "the edition's Open Library id", "example": "OL7353617M",
                "schema": ["type": "string", "pattern": .string(BooksAdapter.idPattern)],
            ]
        ],
        errors: ["400": .error("invalid id")])

    private static let lookUpOperation = OpenAPIValue.formOperation(
        "Editions by their Open Library ids, as a form", answers: "BookList",
        fields: [
            [
                "name": "ids", "required": true, "description": "1 to 20 editions' Open Library ids, comma-separated",
                "example": "OL7353617M,OL1M", "schema": ["type": "string", "pattern": "^OL[1-9][0-9]{0,9}M(,OL[1-9][0-9]{0,9}M){0,19}$"],
            ]
        ],
        errors: ["400": .error("invalid or missing ids")])
}

extension RouteName {
    static let book = RouteName("/books/:id")
    static let books = RouteName("/books")
}

extension OperationTag {
    static let books = OperationTag("Books", "Open Library's editions")
}

extension Setting {
    static let booksAPIURL = SettingKey(default: "https://openlibrary.org/api/books")
    static let ttlBooks = SettingKey(default: 86_400.0)
    static let rateBooksPerMinute = SettingKey(default: 60.0)
}
