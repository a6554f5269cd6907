import Glibc

public enum ServerError: Error, CustomStringConvertible {
    case system(String, Int32)
    case invalidAddress(String)

    public var description: String {
        switch self {
        case .system(let call, let code): return "\(call) failed: \(String(cString: strerror(code)))"
        case .invalidAddress(let host): return "cannot listen on address \(host)"
        }
    }
}
