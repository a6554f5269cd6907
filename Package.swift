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
        // System shims: epoll/eventfd/zlib for the server, variadic setopt for libcurl, libexpat for feeds.
        .target(name: "CSystem", linkerSettings: [.linkedLibrary("z")]),
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        .target(name: "CExpat", linkerSettings: [.linkedLibrary("expat")]),

        // A pthread-backed lock ThreadSanitizer understands (see Locked.swift).
        .target(name: "Locking"),

        .target(name: "HTTPServer", dependencies: ["CSystem", "Locking"]),
        .target(name: "Upstream", dependencies: ["CCurl", "Locking"]),
        .target(name: "ResponseCache", dependencies: ["Locking"]),
        .target(name: "Feeds", dependencies: ["Upstream", "CExpat"]),
        .target(name: "FixtureUpstream", dependencies: ["HTTPServer", "Locking"]),
        .target(name: "Service", dependencies: ["HTTPServer", "Upstream", "Feeds", "ResponseCache", "FixtureUpstream", "Locking"]),
        .executableTarget(name: "FeedProxy", dependencies: ["Service"]),
        .executableTarget(name: "FeedBench", dependencies: ["Feeds"], path: "Benchmarks/FeedBench"),
        .executableTarget(name: "ParserFuzzer", dependencies: ["HTTPServer", "Feeds"], path: "Fuzz/ParserFuzzer"),

        .target(name: "TestSupport", dependencies: ["HTTPServer", "Locking"], path: "Tests/TestSupport"),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"]),
        .testTarget(name: "UpstreamTests", dependencies: ["Upstream", "HTTPServer", "TestSupport"]),
        .testTarget(name: "FeedsTests", dependencies: ["Feeds"]),
        .testTarget(name: "ResponseCacheTests", dependencies: ["ResponseCache", "Locking"]),
        .testTarget(name: "ServiceTests", dependencies: ["Service"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "HTTPServer", "FixtureUpstream"]),
    ],
    swiftLanguageModes: [.v6]
)
