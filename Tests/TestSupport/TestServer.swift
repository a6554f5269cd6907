import HTTPServer

/// Starts an HTTPServer on 127.0.0.1 with an ephemeral port.
public func startTestServer<Context: RootRequestContext>(
    _ router: Router<Context>, configure: (inout ServerConfiguration) -> Void = { _ in }
) throws -> Server {
    var config = ServerConfiguration()
    config.host = "127.0.0.1"
    config.port = 0
    config.threads = 2
    configure(&config)
    let server = Server(configuration: config, router: router)
    try server.start()
    return server
}
