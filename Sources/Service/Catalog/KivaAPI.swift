import Feeds

/// How `/loans` and `/loans/{id}` and their answers are described in the API document.
enum KivaAPI {
    /// A comma-separated list of `token`s (at most `most`); elements may be empty or padded.
    private static func commaList(_ token: String, most: Int? = nil) -> String {
        let element = "\(OpenAPIValue.trimmedSpace)*(\(token))?\(OpenAPIValue.trimmedSpace)*"
        return "^\(element)(,\(element))" + (most.map { "{0,\($0 - 1)}" } ?? "*") + "$"
    }

    /// `word` in any case (JSON Schema patterns have no flags); `-` also as `_` or a space.
    private static func anyCase(_ word: String) -> String {
        word.map { c in c == "-" ? "[-_ ]" : c.isLetter ? "[\(c.uppercased())\(c)]" : String(c) }.joined()
    }

    /// A sector by name, or by Kiva's id (1, 3-10, 12-17: `KivaSector.id`).
    private static let sectorToken = KivaSector.allCases.map(\.rawValue).sorted().map(anyCase).joined(separator: "|") + "|\\+?0*(1[02-7]?|[3-9])"

    static let loans = OpenAPIValue.feedOperation(
        "Kiva's fundraising loans, filtered and ordered", answers: "LoanFeed",
        [
            .query("page", "page number", ["type": "integer", "minimum": 1, "maximum": 10000, "default": 1]),
            .query("limit", "items per page, 1-100", ["type": "integer", "minimum": 1, "maximum": 100, "default": 20]),
            .repeatable(
                "sector",
                "loans in any of these sectors: \(KivaSector.allCases.map(\.rawValue).sorted().joined(separator: ", ")) (any case; also Kiva's numeric sector id)",
                pattern: commaList(sectorToken), example: "retail,food"),
            .repeatable(
                "country", "loans in any of these countries, ISO 3166-1 alpha-2 (any case), at most 50 distinct codes in all",
                pattern: commaList("[A-Za-z]{2}", most: 50), example: "PE,KE"),
            .query(
                "gender", "borrower gender; nonbinary needs Kiva's GraphQL API (400 when KIVA_LOANS_URL is set)",
                ["type": "string", "enum": .array(KivaGender.allCases.map { .string($0.rawValue) })]),
            .query(
                "sort", "order: newest (posted), expiring (soonest first), amountLeft, popularity",
                ["type": "string", "enum": .array(KivaSort.allCases.map { .string($0.rawValue) }), "default": "newest"]),
        ],
        errors: ["400": .error("invalid parameter: the message lists the allowed values")],
        headers: [
            "Link": [
                "schema": ["type": "string", "pattern": .string("^\(linkTarget)(, \(linkTarget))*$")],
                "description": "RFC 8288 paging links: the same targets as page.first, page.prev, page.next and page.last (those that are not null)",
            ]
        ],
        description: "Pages are offsets into Kiva's live list (Kiva offers no cursor): pages fetched or cached at different times "
            + "can overlap or skip loans. Equivalent requests (order, case and repeats of sector/country aside) share a cache entry.")

    private static let linkTarget = "<[^<>]+>; rel=\"(first|prev|next|last)\""

    static let loan = OpenAPIValue.feedOperation(
        "One Kiva loan, with its description", answers: "LoanItem", [.pathID(maximum: 2_147_483_647, "Kiva loan id", example: 2_812_300)],
        errors: ["400": .error("invalid id"), "404": .error("loan_not_found: no loan has this id")])

    private static func pageLink(_ description: String) -> OpenAPIValue {
        OpenAPIValue.nullable("string").merging(["pattern": "^/loans\\?page=[1-9][0-9]*&limit=[1-9][0-9]*(&.*)?$", "description": .string(description)])
    }

    static let schemas: OpenAPIValue = [
        "Page": .closedObject([
            "number": .nonNegative, "size": .nonNegative, "total": .nonNegative, "pages": .nonNegative,
            "first": pageLink("path and query of page 1 of the same request"), "prev": pageLink("the page before (null on page 1)"),
            "next": pageLink("the page after (null on the last page)"), "last": pageLink("the last page (page 1 when there are none)"),
        ]),
        "LoanImages": .imageSizes(
            [("w80h80", 80, 80, 80, "80x80"), ("w480h300", 480, 300, 480, "480x300"), ("w800", 800, nil, 800, "800 wide, height as the photo")],
            description: "Kiva's image service presets"),
        "Loan": .closedObject([
            "id": ["type": "integer"], "name": .nullable("string"), "use": .nullable("string"), "amount": .nullable("number"),
            "fundedAmount": .nullable("number"), "status": .nullable("string"), "country": .nullable("string"), "countryCode": .nullable("string"),
            "town": .nullable("string"), "sector": .nullable("string"), "activity": .nullable("string"), "imageUrl": .nullable("string"),
            "images": .orNull(.ref("LoanImages")), "postedAt": .timestamp, "expiresAt": .timestamp, "borrowerCount": .nullable("integer"),
            "lenderCount": .nullable("integer"), "partnerName": .nullable("string"), "tags": .stringArray,
            "description": OpenAPIValue.nullable("string").merging([
                "description": "the borrower's story as plain text; only in GET /loans/{id}, null in lists"
            ]),
        ]),
        // In lists a loan's description is always null (the story is in GET /loans/{id}).
        "LoanFeed": .envelope(items: ["allOf": [.ref("Loan")], "properties": ["description": ["type": "null"]]], source: "kiva", page: "Page"),
        "LoanItem": .itemEnvelope("Loan", source: "kiva"),
    ]
}
