import Glibc

public enum ServerError: Error, CustomStringConvertible {
    case system(String, Int32)
    case invalidAddress(String)
    case addressInUse(host: String, port: Int)

    public var description: String {
        switch self {
        case .system(let call, let code): return "\(call) failed: \(String(cString: strerror(code)))"
        case .invalidAddress(let host): return "cannot listen on address \(host)"
        case .addressInUse(let host, let port): return "\(host):\(port) is already in use (another process listens there)"
        }
    }
}
