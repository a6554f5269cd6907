import FeedFormats
import Primitives
import TestSupport
import Testing
@testable import Feeds

/// Feeds in the encodings publishers really use, from the recorded fixtures.
@Suite(.offPool) struct FeedEncodingTests {
    @Test func isoLatin1FeedWithWindowsQuotes() throws {
        let feed = try RSSParser.parse(fixture("rss/1580000001.xml"), limit: 10)
        #expect(feed.title == "Historias del Sur")
        #expect(feed.episodes.count == 2)
        #expect(feed.episodes[0].title == "Episodio 42: La canción de São Paulo")
        #expect(
            feed.episodes[0].summary
                == "Una canción, un niño y una ciudad: São Paulo en 1954. ¿Qué queda del barrio de Bixiga? “Todo y nada”, dice Julián.")
        #expect(feed.episodes[0].published == "2025-11-03T08:00:00Z")
        #expect(feed.episodes[1].summary == "Pequeñas historias de la orilla del Río de la Plata.")
    }

    @Test func windows1252FeedWithBytes80To9F() throws {
        let feed = try RSSParser.parse(fixture("rss/1580000002.xml"), limit: 10)
        #expect(feed.title == "Der Wirtschaftspodcast")
        #expect(feed.episodes[0].title == "Folge 118: „Der Euro“ – wer zahlt 1.000 € für Brot?")
        #expect(feed.episodes[0].summary == "Inflation, Zinsen & Co. … Mit Šárka Nováková™ • ein Gespräch über Ÿpsilon-Renten’s Zukunft.")
    }

    @Test func utf16FeedWithBOM() throws {
        let bytes = fixture("rss/1580000003.xml")
        #expect(bytes.starts(with: [0xFF, 0xFE]))
        let feed = try RSSParser.parse(bytes, limit: 10)
        #expect(feed.title == "Café com Ciência")
        #expect(feed.episodes[0].title == "Episódio 7: Ação e reação em São Paulo 🎙")
        #expect(feed.episodes[0].summary == "O coração da ciência brasileira, com participação de João Conceição.")
        #expect(feed.episodes[0].audioBytes == 1_234_567)
    }

    @Test func charsetFromContentTypeWhenTheDeclarationHasNone() throws {
        let bytes = fixture("rss/1580000005.xml")
        let feed = try RSSParser.parse(bytes, limit: 10, contentType: "application/rss+xml; charset=\"ISO-8859-15\"")
        #expect(feed.title == "Rádio Mundo")
        #expect(feed.episodes[0].title == "Economia: o preço do café subiu 2 €")
        #expect(feed.episodes[0].summary == "Œuvres, Šimon e Žofia explicam o orçamento.")
        // Without the header it is read as UTF-8, which these bytes are not.
        #expect(throws: ClientError.self) { try RSSParser.parse(bytes, limit: 10) }
    }

    @Test func declarationWinsOverContentType() throws {
        let feed = try RSSParser.parse(fixture("rss/1580000002.xml"), limit: 10, contentType: "text/xml; charset=utf-8")
        #expect(feed.episodes[0].title?.contains("„Der Euro“") == true)
    }

    @Test func undecodableBytesAre502WithAClearMessage() {
        let expected = ClientError(
            status: 502, code: "bad_upstream_response", message: "the podcast feed is not valid UTF-8: undecodable bytes at line 4, column 13")
        #expect(throws: expected) { try RSSParser.parse(fixture("rss/1580000006.xml"), limit: 10) }
    }

    @Test func byteUndefinedInWindows1252Is502() {
        var bytes = Array("<?xml version=\"1.0\" encoding=\"windows-1252\"?><rss version=\"2.0\"><channel><title>x".utf8)
        bytes.append(0x81)  // one of the five bytes 1252 leaves undefined
        bytes += Array("</title></channel></rss>".utf8)
        #expect(
            throws: ClientError(
                status: 502, code: "bad_upstream_response", message: "the podcast feed is not valid windows-1252: undecodable bytes at line 1, column 82")
        ) {
            try RSSParser.parse(bytes, limit: 10)
        }
    }

    @Test func unknownEncodingIs502() {
        let xml = "<?xml version=\"1.0\" encoding=\"Shift_JIS\"?><rss version=\"2.0\"><channel><title>x</title></channel></rss>"
        #expect(
            throws: ClientError(status: 502, code: "bad_upstream_response", message: "the podcast feed is in an encoding that cannot be decoded (Shift_JIS)")
        ) {
            try RSSParser.parse(Array(xml.utf8), limit: 10)
        }
    }

    @Test(arguments: [
        ("ISO-8859-15", [0xA4], "€"), ("latin9", [0xA4], "€"), ("iso_8859-2", [0xB1], "ą"), ("windows-1251", [0xC6, 0xE0], "Жа"),
        ("KOI8-R", [0xC1], "а"), ("latin1", [0xE9, 0x92], "é’"), ("ISO-8859-1", [0x80], "€"), ("utf8", [0xC3, 0xA9], "é"),
    ])
    func declaredSingleByteCharsets(_ label: String, _ high: [UInt8], _ text: String) throws {
        let bytes =
            Array("<?xml version=\"1.0\" encoding=\"\(label)\"?><rss version=\"2.0\"><channel><title>".utf8) + high + Array("</title></channel></rss>".utf8)
        #expect(try RSSParser.parse(bytes, limit: 10).title == text)
    }

    @Test(arguments: [
        ("application/rss+xml; charset=ISO-8859-1", "ISO-8859-1"), ("text/xml;charset=\"windows-1252\"", "windows-1252"),
        ("text/xml; format=flowed; Charset=UTF-8", "UTF-8"), ("application/xml", nil), ("text/xml; charset=", nil),
    ])
    func charsetParameter(_ header: String, _ charset: String?) {
        #expect(XMLEncoding.charset(fromContentType: header) == charset)
    }

    @Test func billionLaughsIsRefusedQuickly() {
        var xml = "<?xml version=\"1.0\"?><!DOCTYPE rss [<!ENTITY lol \"lol\">"
        for i in 1...9 { xml += "<!ENTITY lol\(i) \"" + String(repeating: "&lol\(i == 1 ? "" : String(i - 1));", count: 10) + "\">" }
        xml += "]><rss version=\"2.0\"><channel><title>&lol9;</title></channel></rss>"
        let clock = ContinuousClock()
        let started = clock.now
        #expect(throws: ClientError(status: 502, code: "bad_upstream_response", message: "the podcast feed declares XML entities, which are not accepted")) {
            try RSSParser.parse(Array(xml.utf8), limit: 10)
        }
        #expect(clock.now - started < .seconds(30), "refused, not expanded (a billion `lol`s)")
    }

    @Test func externalDTDEntitiesAreDecodedAsHTML() throws {
        // RSS 0.91 feeds name Netscape's DTD (never fetched) and use its HTML entities.
        let xml =
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><!DOCTYPE rss PUBLIC \"-//Netscape Communications//DTD RSS 0.91//EN\" \"http://my.netscape.com/publish/formats/rss-0.91.dtd\"><rss version=\"0.91\"><channel><title>Caf&eacute; &amp; &nbsp;Bar &unknown;</title></channel></rss>"
        #expect(try RSSParser.parse(Array(xml.utf8), limit: 10).title == "Café & \u{A0}Bar &unknown;")
    }
}
