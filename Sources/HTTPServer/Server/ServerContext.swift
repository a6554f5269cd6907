import Primitives
import Synchronization

/// State shared by all event loops: configuration, the application's responder, counters, the shutdown phase.
final class ServerContext: Sendable {
    let configuration: ServerConfiguration
    let responder: any Responder
    let statistics: ServerStatistics
    let shutdown: ShutdownPhase
    private let requestIDs = RequestIDGenerator()

    init(configuration: ServerConfiguration, responder: any Responder, statistics: ServerStatistics, shutdown: ShutdownPhase) {
        self.statistics = statistics
        self.shutdown = shutdown
        self.configuration = configuration
        self.responder = responder
    }

    var isDraining: Bool { shutdown.isDraining }

    /// An id for an answer given before (or without) a parsed request: refusals and rejections.
    func generatedRequestID() -> UInt64 { requestIDs.next() }

    func assignRequestID(_ core: CoreRequestContext) {
        if let given = core.request.headers["x-request-id"], RequestIDGenerator.isValid(given) {
            core.givenID = given
        } else {
            core.generatedID = requestIDs.next()
        }
    }
}
