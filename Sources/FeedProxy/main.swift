import Dispatch
import Foundation
import Service

// Thin entry point: configuration, wiring, signals.
let outcome: ConfigurationParser.Outcome
do {
    outcome = try ConfigurationParser.parse(arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
} catch {
    FileHandle.standardError.write(Data("feedproxy: \(error.description)\n".utf8))
    exit(2)
}

switch outcome {
case .help(let text):
    print(text)
    exit(0)
case .version(let text):
    print(text)
    exit(0)
case .healthcheck(let configuration):
    exit(HealthProbe.check(port: configuration.port) ? 0 : 1)
case .run(let configuration):
    let app: App
    let port: Int
    do {
        app = try App(configuration: configuration)
        port = try app.start()
    } catch {
        FileHandle.standardError.write(Data("feedproxy: cannot start: \(error)\n".utf8))
        exit(1)
    }
    var fields: [(String, LogValue)] = [("host", .string(app.configuration.host)), ("port", .int(port)), ("version", .string(Configuration.version))]
    if let fx = app.fixtureUpstreamURL { fields.append(("fixtures_upstream", .string(fx))) }
    app.logger.info("listening", fields)

    signal(SIGTERM, SIG_IGN)
    signal(SIGINT, SIG_IGN)
    signal(SIGPIPE, SIG_IGN)
    var sources: [DispatchSourceSignal] = []
    for sig in [SIGTERM, SIGINT] {
        let source = DispatchSource.makeSignalSource(signal: sig, queue: .main)
        source.setEventHandler {
            app.logger.info("shutting down", [("signal", .int(Int(sig)))])
            app.shutdown()
            app.logger.info("stopped")
            app.logger.sink.flush()
            exit(0)
        }
        source.resume()
        sources.append(source)
    }
    dispatchMain()
}
