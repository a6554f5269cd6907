// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "FeedProxy",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "feedproxy", targets: ["FeedProxy"]),
        .executable(name: "feedproxy-bench", targets: ["FeedBench"]),
        .executable(name: "ParserFuzzer", targets: ["ParserFuzzer"]),
    ],
    targets: [
        // System shims: epoll/eventfd/zlib for the server, variadic setopt for libcurl.
        .target(name: "CSystem", linkerSettings: [.linkedLibrary("z")]),
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        .target(name: "CHiredis", linkerSettings: [.linkedLibrary("hiredis")]),

        // A pthread-backed lock ThreadSanitizer understands (see Locked.swift).
        .target(name: "Locking"),

        .target(name: "HTTPServer", dependencies: ["CSystem", "Locking"]),
        .target(name: "Upstream", dependencies: ["CCurl", "Locking"]),
        .target(name: "ResponseCache", dependencies: ["Locking"]),
        .target(name: "Feeds", dependencies: ["Upstream"]),
        .target(name: "FixtureUpstream", dependencies: ["HTTPServer", "Locking"]),
        // The optional shared tier: implements the protocols ResponseCache and Upstream own.
        .target(name: "RedisTier", dependencies: ["CHiredis", "ResponseCache", "Upstream", "Locking"]),
        .target(name: "Service", dependencies: ["HTTPServer", "Upstream", "Feeds", "ResponseCache", "RedisTier", "FixtureUpstream", "Locking"]),
        .executableTarget(name: "FeedProxy", dependencies: ["Service"]),
        .executableTarget(name: "FeedBench", dependencies: ["Feeds"], path: "Benchmarks/FeedBench"),
        .executableTarget(name: "ParserFuzzer", dependencies: ["HTTPServer", "Feeds"], path: "Fuzz/ParserFuzzer"),

        .target(name: "TestSupport", dependencies: ["HTTPServer", "Locking"], path: "Tests/TestSupport"),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"]),
        .testTarget(name: "UpstreamTests", dependencies: ["Upstream", "HTTPServer", "TestSupport"]),
        .testTarget(name: "FeedsTests", dependencies: ["Feeds"]),
        .testTarget(name: "ResponseCacheTests", dependencies: ["ResponseCache", "Locking"]),
        .testTarget(name: "ServiceTests", dependencies: ["Service"]),
        .testTarget(name: "RedisTierTests", dependencies: ["RedisTier", "ResponseCache", "Upstream", "TestSupport", "Locking"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "HTTPServer", "FixtureUpstream"]),
    ],
    swiftLanguageModes: [.v6]
)
