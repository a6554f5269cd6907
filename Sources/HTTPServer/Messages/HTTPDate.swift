import Glibc

/// IMF-fixdate (RFC 9110 §5.6.7) for the `Date` header, formatted once a second.
struct HTTPDateCache {
    private var second: Int = -1
    private(set) var bytes: [UInt8] = []

    mutating func current() -> [UInt8] {
        let now = Int(time(nil))
        if now != second {
            second = now
            bytes = Array(Self.format(now).utf8)
        }
        return bytes
    }

    static func format(_ epoch: Int) -> String {
        var t = time_t(epoch)
        var tmValue = tm()
        gmtime_r(&t, &tmValue)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let day = days[Int(tmValue.tm_wday) % 7]
        let month = months[Int(tmValue.tm_mon) % 12]
        return "\(day), \(two(tmValue.tm_mday)) \(month) \(tmValue.tm_year + 1900) \(two(tmValue.tm_hour)):\(two(tmValue.tm_min)):\(two(tmValue.tm_sec)) GMT"
    }
}

/// A time as HTTP and RFC 822 documents write it (`Sun, 06 Nov 1994 08:49:37 GMT`).
public enum HTTPDate {
    public static func format(_ epoch: Int) -> String { HTTPDateCache.format(epoch) }
}
