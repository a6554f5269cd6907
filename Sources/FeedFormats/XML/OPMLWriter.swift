/// Writes an OPML 2.0 subscription list, as podcast apps import one: one `<outline type="rss">`
/// per feed, its title as `text` and `title`, its feed as `xmlUrl`.
package enum OPMLWriter {
    package struct Feed: Sendable, Equatable {
        package var title: String?
        package var xmlUrl: String
        package var htmlUrl: String?

        package init(title: String?, xmlUrl: String, htmlUrl: String? = nil) {
            self.title = title
            self.xmlUrl = xmlUrl
            self.htmlUrl = htmlUrl
        }
    }

    /// The document; `created`: its `dateCreated` (RFC 822, as OPML 2.0 asks); `comment`:
    /// a note for people reading it (what was left out), never holding `--`.
    package static func document(title: String, created: String, feeds: [Feed], comment: String? = nil) -> [UInt8] {
        var out = Array(#"<?xml version="1.0" encoding="UTF-8"?>"#.utf8)
        out += "\n<opml version=\"2.0\">\n  <head>\n    <title>".utf8
        appendEscaped(title, to: &out)
        out += "</title>\n    <dateCreated>".utf8
        appendEscaped(created, to: &out)
        out += "</dateCreated>\n  </head>\n  <body>\n".utf8
        if let comment {
            out += "    <!-- ".utf8
            out += comment.replacing("--", with: "- -").utf8.filter { $0 >= 0x20 || $0 == 0x0A }
            out += " -->\n".utf8
        }
        for feed in feeds {
            let text = feed.title ?? feed.xmlUrl
            out += "    <outline type=\"rss\" text=\"".utf8
            appendEscaped(text, to: &out)
            out += "\" title=\"".utf8
            appendEscaped(text, to: &out)
            out += "\" xmlUrl=\"".utf8
            appendEscaped(feed.xmlUrl, to: &out)
            if let html = feed.htmlUrl {
                out += "\" htmlUrl=\"".utf8
                appendEscaped(html, to: &out)
            }
            out += "\"/>\n".utf8
        }
        out += "  </body>\n</opml>\n".utf8
        return out
    }

    /// Text as an XML 1.0 attribute value or element content: markup characters escaped,
    /// line breaks and tabs as character references (attribute normalisation would turn them
    /// into spaces), and characters XML 1.0 cannot hold (other controls, lone surrogates are
    /// not in a Swift string) dropped.
    package static func appendEscaped(_ text: String, to out: inout [UInt8]) {
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;".utf8
            case "<": out += "&lt;".utf8
            case ">": out += "&gt;".utf8
            case "\"": out += "&quot;".utf8
            case "\n": out += "&#10;".utf8
            case "\r": out += "&#13;".utf8
            case "\t": out += "&#9;".utf8
            default:
                let v = scalar.value
                if v < 0x20 || v == 0xFFFE || v == 0xFFFF { continue }
                out += String(scalar).utf8
            }
        }
    }
}
