// swift-tools-version:6.0
import PackageDescription

// Members of a module are visible only in files that import it: keeps Foundation-only API
// out of files that import FoundationEssentials or nothing.
let strictImports: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "FeedProxy",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "feedproxy", targets: ["FeedProxy"]),
        .executable(name: "feedproxy-bench", targets: ["FeedBench"]),
        .executable(name: "ParserFuzzer", targets: ["ParserFuzzer"]),
    ],
    targets: [
        // System shims: epoll/eventfd/zlib for the server, variadic setopt for libcurl, libexpat for feeds.
        .target(name: "CSystem", linkerSettings: [.linkedLibrary("z")]),
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        .target(name: "CExpat", linkerSettings: [.linkedLibrary("expat")]),
        .target(name: "CHiredis", linkerSettings: [.linkedLibrary("hiredis")]),

        // A pthread-backed lock ThreadSanitizer understands (see Locked.swift), and pthreads themselves.
        .target(name: "Locking", dependencies: ["CSystem"]),

        .target(name: "HTTPServer", dependencies: ["CSystem", "Locking"], swiftSettings: strictImports),
        .target(name: "Upstream", dependencies: ["CCurl", "Locking"], swiftSettings: strictImports),
        .target(name: "ResponseCache", dependencies: ["Locking"]),
        .target(name: "Feeds", dependencies: ["Upstream", "CExpat"], swiftSettings: strictImports),
        .target(name: "FixtureUpstream", dependencies: ["HTTPServer", "Locking"], swiftSettings: strictImports),
        // The optional shared tier: implements the protocols ResponseCache and Upstream own.
        .target(name: "RedisTier", dependencies: ["CHiredis", "ResponseCache", "Upstream", "Locking"], swiftSettings: strictImports),
        .target(
            name: "Service", dependencies: ["HTTPServer", "Upstream", "Feeds", "ResponseCache", "RedisTier", "FixtureUpstream", "Locking"],
            swiftSettings: strictImports),
        .executableTarget(name: "FeedProxy", dependencies: ["Service"], swiftSettings: strictImports),
        .executableTarget(name: "FeedBench", dependencies: ["Feeds"], path: "Benchmarks/FeedBench"),
        .executableTarget(name: "ParserFuzzer", dependencies: ["HTTPServer", "Feeds"], path: "Fuzz/ParserFuzzer"),

        .target(name: "TestSupport", dependencies: ["HTTPServer", "Locking"], path: "Tests/TestSupport"),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport", "Locking"]),
        .testTarget(name: "UpstreamTests", dependencies: ["Upstream", "HTTPServer", "TestSupport", "Locking"]),
        .testTarget(name: "FeedsTests", dependencies: ["Feeds"]),
        .testTarget(name: "ResponseCacheTests", dependencies: ["ResponseCache", "Locking"]),
        .testTarget(name: "ServiceTests", dependencies: ["Service", "HTTPServer", "Upstream"]),
        .testTarget(name: "RedisTierTests", dependencies: ["RedisTier", "ResponseCache", "Upstream", "TestSupport", "Locking"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "HTTPServer", "FixtureUpstream"]),
    ],
    swiftLanguageModes: [.v6]
)
