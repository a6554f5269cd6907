// swift-tools-version:6.0
import PackageDescription

// Members of a module are visible only in files that import it: keeps Foundation-only API
// out of files that import FoundationEssentials or nothing.
let strictImports: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")]

// The event loop's per-request path, in release builds only: Swift's run-time exclusivity
// checks on class properties cost it about 8 % of its instructions (a thread-local lookup
// per access, callgrind). Debug builds, the whole test suite and the TSan run keep them, so
// an overlapping access still fails a test; the compile-time checks stay on everywhere.
let hotLoopRelease: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "FeedProxy",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "feedproxy", targets: ["FeedProxy"]),
        .executable(name: "feedproxy-bench", targets: ["FeedBench"]),
        .executable(name: "ParserFuzzer", targets: ["ParserFuzzer"]),
    ],
    targets: [
        // System shims: epoll/eventfd/zlib (CSystem), variadic setopt for libcurl (CCurl), libexpat and
        // libgumbo for feeds (CExpat, CGumbo), hiredis with a reply-size cap (CHiredis), OpenSSL's
        // libcrypto for SHA-256, HMAC-SHA256 and constant-time comparison (CCrypto), libxxhash (CXXHash),
        // SQLite for records kept across restarts (CSQLite).
        .target(name: "CSystem", linkerSettings: [.linkedLibrary("z")]),
        .target(name: "CCrypto", linkerSettings: [.linkedLibrary("crypto")]),
        .target(name: "CXXHash", linkerSettings: [.linkedLibrary("xxhash")]),
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        .target(name: "CExpat", linkerSettings: [.linkedLibrary("expat")]),
        .target(name: "CGumbo", linkerSettings: [.linkedLibrary("gumbo")]),
        .target(name: "CHiredis", linkerSettings: [.linkedLibrary("hiredis")]),
        .target(name: "CSQLite", linkerSettings: [.linkedLibrary("sqlite3")]),
        .target(
            name: "CVips",
            cSettings: [
                .unsafeFlags([
                    "-I/usr/include/glib-2.0", "-I/usr/lib/x86_64-linux-gnu/glib-2.0/include", "-I/usr/lib/aarch64-linux-gnu/glib-2.0/include",
                ])
            ],
            linkerSettings: [.linkedLibrary("vips"), .linkedLibrary("gobject-2.0"), .linkedLibrary("glib-2.0")]),

        // What every layer uses: locks ThreadSanitizer understands, threads and the clock, JSON
        // bytes, timestamps, xxHash64 and HMAC-SHA256 (on the libraries), the LRU table, saturating
        // conversions, trace ids, the client error.
        .target(name: "Primitives", dependencies: ["CSystem", "CCrypto", "CXXHash"]),

        .target(name: "HTTPServer", dependencies: ["CSystem", "Primitives"], swiftSettings: strictImports + hotLoopRelease),
        .target(name: "Upstream", dependencies: ["CCurl", "Primitives"], swiftSettings: strictImports),
        .target(name: "ResponseCache", dependencies: ["Primitives"]),
        // The format readers feeds need (JSON, XML on expat, HTML, dates and numbers): no upstream, no feed.
        .target(name: "FeedFormats", dependencies: ["CExpat", "CGumbo", "Primitives"], swiftSettings: strictImports),
        // Artwork resized and re-encoded on libvips, on a pool of its own: no upstream, no feed.
        .target(name: "Images", dependencies: ["CVips", "Primitives"], swiftSettings: strictImports),
        // A podcast's sync: positions (tokens), change logs and the histories kept as records; what
        // a token means, below the adapter that writes change logs into each feed's data.
        .target(name: "EpisodeSync", dependencies: ["Primitives"], swiftSettings: strictImports),
        .target(name: "Feeds", dependencies: ["Upstream", "FeedFormats", "Images", "EpisodeSync", "Primitives"], swiftSettings: strictImports),
        .target(name: "FixtureUpstream", dependencies: ["HTTPServer", "Primitives"], swiftSettings: strictImports),
        // Records that outlive a restart on one node (the feed ids given out): SQLite in DATA_DIR.
        .target(name: "Records", dependencies: ["CSQLite", "Primitives"], swiftSettings: strictImports),
        // The optional shared tier: implements the protocols ResponseCache and Upstream own.
        .target(name: "RedisTier", dependencies: ["CHiredis", "ResponseCache", "Upstream", "Primitives"], swiftSettings: strictImports),
        // What an operator watches: /metrics' families and the parts each subsystem renders, the
        // logger and its sink, OTLP span export. No feed, no route.
        .target(name: "Observability", dependencies: ["Upstream", "Primitives"], swiftSettings: strictImports),
        // A podcast's push: event streams' hub (one event per change), pings, WebSub, library handles.
        .target(
            name: "Push", dependencies: ["HTTPServer", "Upstream", "Feeds", "EpisodeSync", "FeedFormats", "ResponseCache", "Primitives"],
            swiftSettings: strictImports),
        .target(
            name: "Service",
            dependencies: ["HTTPServer", "Upstream", "Feeds", "ResponseCache", "RedisTier", "Records", "Push", "Observability", "EpisodeSync", "Primitives"],
            // The demo page's files stay real HTML, CSS and JavaScript (editors and `make lint` read them as such), in the binary.
            resources: [.embedInCode("Demo/demo.html"), .embedInCode("Demo/demo.css"), .embedInCode("Demo/demo.js")],
            swiftSettings: strictImports),
        // The executable wires the offline fixture upstream in (`--fixtures`); Service never sees it.
        .executableTarget(name: "FeedProxy", dependencies: ["Service", "FixtureUpstream", "Primitives"], swiftSettings: strictImports),
        // Each declared upstream's adapter over its recorded answers, through the catalog (Service).
        .executableTarget(name: "FeedBench", dependencies: ["Feeds", "FeedFormats", "Images", "Primitives", "Service"], path: "Benchmarks/FeedBench"),
        // Every upstream's answers are reached through its declaration's fuzz entry (Service).
        .executableTarget(name: "ParserFuzzer", dependencies: ["HTTPServer", "Feeds", "Service"], path: "Fuzz/ParserFuzzer"),

        .target(name: "TestSupport", dependencies: ["HTTPServer", "ResponseCache", "Primitives", "CSystem"], path: "Tests/TestSupport"),
        .testTarget(name: "PrimitivesTests", dependencies: ["Primitives", "TestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport", "Primitives"]),
        .testTarget(name: "UpstreamTests", dependencies: ["Upstream", "HTTPServer", "TestSupport", "Primitives"]),
        .testTarget(name: "EpisodeSyncTests", dependencies: ["EpisodeSync"]),
        .testTarget(name: "FeedsTests", dependencies: ["Feeds", "EpisodeSync", "FeedFormats", "Primitives", "TestSupport"]),
        .testTarget(name: "ImagesTests", dependencies: ["Images", "Primitives", "TestSupport"]),
        .testTarget(name: "ResponseCacheTests", dependencies: ["ResponseCache", "Primitives", "TestSupport"]),
        .testTarget(
            name: "ServiceTests", dependencies: ["Service", "Observability", "EpisodeSync", "Feeds", "HTTPServer", "Upstream", "Primitives", "TestSupport"]),
        .testTarget(name: "PushTests", dependencies: ["Push", "EpisodeSync", "Feeds", "HTTPServer", "ResponseCache", "Upstream", "Primitives", "TestSupport"]),
        .testTarget(name: "RecordsTests", dependencies: ["Records", "TestSupport"]),
        .testTarget(name: "RedisTierTests", dependencies: ["RedisTier", "ResponseCache", "Upstream", "TestSupport", "Primitives"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "HTTPServer", "FixtureUpstream", "Service", "Primitives"]),
    ],
    swiftLanguageModes: [.v6]
)
