import FixtureUpstream
import FoundationEssentials
import Glibc
import Observability
import Primitives
import Service

// Thin entry point: configuration, wiring, signals.
func writeToStandardError(_ message: String) {
    let bytes = Array(message.utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

let outcome: ConfigurationParser.Outcome
do {
    outcome = try ConfigurationParser.parse(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
} catch {
    writeToStandardError("feedproxy: \(error.description)\n")
    exit(2)
}

switch outcome {
case .help(let text):
    print(text)
    exit(0)
case .version(let text), .apiDocument(let text):
    print(text)
    exit(0)
case .healthcheck(let configuration):
    exit(HealthProbe.check(port: configuration.port) ? 0 : 1)
case .run(var configuration):
    // Before any thread allocates: threads made later share the capped arenas.
    let arenas = HeapArenas.limit(environment: ProcessInfo.processInfo.environment)
    // SIGTERM and SIGINT are taken synchronously by this thread (sigwait below), so they
    // are blocked before any thread exists: every thread started later inherits the mask.
    var shutdownSignals = sigset_t()
    sigemptyset(&shutdownSignals)
    sigaddset(&shutdownSignals, SIGTERM)
    sigaddset(&shutdownSignals, SIGINT)
    pthread_sigmask(SIG_BLOCK, &shutdownSignals, nil)
    signal(SIGPIPE, SIG_IGN)

    let app: App
    let port: Int
    let fixtures: FixtureUpstream?
    do {
        fixtures = try configuration.fixturesDirectory.map { try FixtureUpstream(directory: $0) }
        if let fixtures { configuration.pointUpstreams(atFixtures: fixtures.baseURL) }
        app = try App(configuration: configuration)
        port = try app.start()
    } catch {
        writeToStandardError("feedproxy: cannot start: \(error)\n")
        exit(1)
    }
    var fields: [(String, LogValue)] = [("host", .string(app.configuration.host)), ("port", .int(port)), ("version", .string(Configuration.version))]
    fields.append(("loop_cpus", .string(app.cpuPlacement)))
    switch arenas {
    case .capped(let count): fields.append(("malloc_arenas", .int(count)))
    case .operators(let given): fields.append(("malloc_arenas", .string("MALLOC_ARENA_MAX=\(given)")))
    case .unchanged: fields.append(("malloc_arenas", .string("unchanged")))
    }
    if let fixtures { fields.append(("fixtures_upstream", .string(fixtures.baseURL))) }
    app.logger.info("listening", fields)
    HeapTrimmer.shared.start()

    var received: Int32 = 0
    // sigwait fails only for an invalid set; shut down rather than spin if it ever does.
    if sigwait(&shutdownSignals, &received) != 0 { received = SIGTERM }
    app.logger.info("shutting down", [("signal", .int(Int(received)))])
    app.shutdown()
    fixtures?.stop()
    app.logger.info("stopped")
    app.logger.sink.flush()
    exit(0)
}
