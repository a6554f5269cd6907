/// The API document, derived from the route declarations: each documented route's path item
/// with its operation id and tag, each upstream's schemas, the tags in the order routes first
/// use them. Served at `/openapi.json`, written to docs/openapi.json (`feedproxy --openapi`),
/// and part of the shared-cache fingerprint.
enum OpenAPIDocument {
    static let json = document().text(indented: false)

    static func document(routes: [RouteDeclaration] = RouteDeclaration.all, upstreams: [UpstreamDeclaration] = UpstreamCatalog.all) -> OpenAPIValue {
        let operations = routes.compactMap(\.operation)
        var tags: [OperationTag] = []
        for operation in operations where !tags.contains(operation.tag) { tags.append(operation.tag) }
        // One path item per path: a GET and a POST on one path are two operations of it.
        var paths: [(key: String, value: OpenAPIValue)] = []
        for operation in operations {
            let key = operation.methodKey
            let item: OpenAPIValue = [
                key: operation.pathItem[key]?.merging(["operationId": .string(operation.id), "tags": [.string(operation.tag.name)]]) ?? [:]
            ]
            if let i = paths.firstIndex(where: { $0.key == operation.path }) {
                paths[i].value = paths[i].value.merging(item)
            } else {
                paths.append((operation.path, operation.pathItem.merging(item)))
            }
        }
        return [
            "openapi": "3.1.0",
            "info": [
                "title": "FeedProxy", "version": .string(Configuration.version),
                "description": .string("\(topics(upstreams).capitalisedFirst) from public feeds and APIs as one small, typed, cached JSON API."),
            ],
            "servers": [["url": "http://localhost:8080"]],
            "paths": .object(paths),
            "components": ["schemas": upstreams.map(\.schemas).reduce(sharedSchemas) { $0.merging($1) }],
            "tags": .array(tags.map { ["name": .string($0.name), "description": .string($0.description)] }),
        ]
    }

    /// What the upstreams serve, by the tags of their routes in the catalog's order, as a phrase
    /// ("photos, podcasts, loans and images"): the document's description and `--help`'s first
    /// line say it, so neither names an upstream by hand.
    static func topics(_ upstreams: [UpstreamDeclaration] = UpstreamCatalog.all) -> String {
        var names: [String] = []
        for route in upstreams.flatMap(\.routes) {
            if let name = route.operation?.tag.name.lowercased(), !names.contains(name) { names.append(name) }
        }
        guard let last = names.popLast() else { return "" }
        return names.isEmpty ? last : names.joined(separator: ", ") + " and " + last
    }

    /// What makes a document wrong that its declarations alone do not rule out: two routes with
    /// one path or operation id, a schema declared twice, a reference to one declared nowhere.
    static func problems(routes: [RouteDeclaration] = RouteDeclaration.all, upstreams: [UpstreamDeclaration] = UpstreamCatalog.all) -> [String] {
        let operations = routes.compactMap(\.operation)
        var found: [String] = []
        for (what, names) in [("path", operations.map { "\($0.method) \($0.path)" }), ("operationId", operations.map(\.id)), ("tag", tagNames(operations))] {
            let repeated = Dictionary(grouping: names, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
            if !repeated.isEmpty { found.append("more than one \(what): \(repeated.joined(separator: ", "))") }
        }
        let declared = ([sharedSchemas] + upstreams.map(\.schemas)).flatMap { schemas -> [String] in
            guard case .object(let members) = schemas else { return [] }
            return members.map(\.key)
        }
        let twice = Dictionary(grouping: declared, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        if !twice.isEmpty { found.append("schemas declared twice: \(twice.joined(separator: ", "))") }
        let prefix = "#/components/schemas/"
        let dangling = Set(
            document(routes: routes, upstreams: upstreams).references.filter { !$0.hasPrefix(prefix) || !declared.contains(String($0.dropFirst(prefix.count))) }
        )
        if !dangling.isEmpty { found.append("schemas referred to but declared nowhere: \(dangling.sorted().joined(separator: ", "))") }
        return found
    }

    /// One name per distinct tag: two tags that share a name but not a description show up twice.
    private static func tagNames(_ operations: [RouteOperation]) -> [String] {
        var seen: [OperationTag] = []
        for operation in operations where !seen.contains(operation.tag) { seen.append(operation.tag) }
        return seen.map(\.name)
    }

    /// The schemas every part uses: an error's, and what every image map's sizes are.
    static let sharedSchemas: OpenAPIValue = [
        "Error": [
            "type": "object", "required": ["error"],
            "properties": [
                "error": [
                    "type": "object", "required": ["status", "code", "message"],
                    "properties": [
                        "status": ["type": "integer"],
                        // Every code (ErrorCodes), with its status and when: docs/API.md's errors table.
                        "code": [
                            "type": "string", "enum": .array(ErrorCodes.all.map { .string($0.code) }),
                            "x-codes": .array(ErrorCodes.all.map { ["code": .string($0.code), "status": .int($0.status), "when": .string($0.when)] }),
                        ],
                        "message": ["type": "string"],
                    ],
                ]
            ],
        ],
        "ImageSize": .closedObject([
            "url": ["type": "string"],
            "width": OpenAPIValue.nullable("integer").merging(["minimum": 1, "description": "pixels; null when the upstream does not fix it"]),
            "height": OpenAPIValue.nullable("integer").merging(["minimum": 1, "description": "pixels; null when the upstream does not fix it"]),
            "maxEdge": ["type": "integer", "minimum": 1, "description": "the longest edge is at most this many pixels"],
        ]),
    ]
}

extension String {
    /// The first character upper-cased.
    fileprivate var capitalisedFirst: String { prefix(1).uppercased() + dropFirst() }
}
