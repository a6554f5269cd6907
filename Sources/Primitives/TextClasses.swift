extension StringProtocol {
    /// Without the leading and trailing scalars `isTrimmed` accepts: the one trimming
    /// routine every layer uses, for HTTP's OWS and for feed text alike.
    public func trimming(where isTrimmed: (Unicode.Scalar) -> Bool) -> Substring {
        let s = Substring(self)
        let scalars = s.unicodeScalars
        guard let start = scalars.firstIndex(where: { !isTrimmed($0) }), let last = scalars.lastIndex(where: { !isTrimmed($0) })
        else { return s[s.endIndex...] }
        return Substring(scalars[start...last])
    }

    /// Without leading and trailing spaces and tabs (HTTP's OWS).
    public func trimmingASCIIWhitespace() -> Substring {
        trimming { $0 == " " || $0 == "\t" }
    }

    /// Without leading and trailing Unicode whitespace (feed text: NBSP and line breaks too).
    public func trimmingWhitespace() -> String {
        String(trimming { $0.properties.isWhitespace })
    }
}

extension Character {
    /// 0-9 only (`isNumber` alone also accepts other scripts' digits and fractions).
    public var isASCIIDigit: Bool { isASCII && isNumber }
}
