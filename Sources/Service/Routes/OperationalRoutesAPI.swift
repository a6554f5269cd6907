/// How the operational routes are described in the API document.
enum OperationalRoutesAPI {
    private static func answer(_ description: String, _ type: String, _ schema: OpenAPIValue) -> OpenAPIValue {
        ["description": .string(description), "content": [type: ["schema": schema]]]
    }

    private static func status(_ value: String) -> OpenAPIValue { ["type": "object", "properties": ["status": ["const": .string(value)]]] }

    private static func get(_ summary: String, _ responses: OpenAPIValue) -> OpenAPIValue {
        ["get": ["summary": .string(summary), "responses": responses]]
    }

    static let index = get(
        "index: the service and its routes",
        [
            "200": answer(
                "name, version and the routes served", "application/json",
                [
                    "type": "object", "required": ["name", "version", "routes"], "additionalProperties": false,
                    "properties": ["name": ["const": "FeedProxy"], "version": ["type": "string"], "routes": .stringArray],
                ])
        ])
    static let health = get("liveness", ["200": answer("serving", "application/json", status("ok"))])
    static let readiness = get(
        "readiness",
        [
            "200": answer(
                "ready (redis: down while Redis is unreachable: the replica serves from its own cache and its streams hear only its own reads)",
                "application/json",
                ["type": "object", "properties": ["status": ["const": "ready"], "redis": ["const": "down"], "note": ["type": "string"]]]),
            "503": answer("draining", "application/json", status("draining")).merging(["headers": .retryAfter]),
        ])
    static let metrics = get("Prometheus metrics", ["200": answer("text exposition format", "text/plain", ["type": "string"])])
    static let demo = get(
        "the built-in demo page: the photo browser, podcast client and loans list on this API (DEMO_PAGE)",
        [
            "200": answer("the page (its script and stylesheet are /demo/app.js and /demo/app.css)", "text/html", ["type": "string"]),
            "304": ["description": "not modified (If-None-Match matched)"],
        ])
    static let document = get("the API document (OpenAPI 3.1)", ["200": answer("OpenAPI 3.1", "application/json", ["type": "object"])])
}
