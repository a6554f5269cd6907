import Foundation
import TestSupport
import Testing

@testable import Service

/// The document's text is what Python's `json.dumps(sort_keys=True)` writes (the document the
/// service published before it was built in Swift, and so the shared-cache fingerprint).
@Suite(.offPool) struct OpenAPITextTests {
    @Test func keysAreSortedAndEveryCharacterOutsideASCIIIsEscaped() {
        let value: OpenAPIValue = ["b": ["é\u{1F600}\n\"\\\u{01}", nil, true, -3], "a": [:], "A": []]
        #expect(value.text(indented: false) == #"{"A":[],"a":{},"b":["\u00e9\ud83d\ude00\n\"\\\u0001",null,true,-3]}"#)
        #expect(
            value.text(indented: true)
                == "{\n  \"A\": [],\n  \"a\": {},\n  \"b\": [\n    \"\\u00e9\\ud83d\\ude00\\n\\\"\\\\\\u0001\",\n    null,\n    true,\n    -3\n  ]\n}")
    }

    @Test func theTextIsJSONThatReadsBackAsTheDocument() throws {
        let text = OpenAPIDocument.json
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? NSDictionary
        let indented = try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.document().text(indented: true).utf8)) as? NSDictionary
        #expect(parsed != nil && parsed == indented)
        #expect(!text.contains("\n"), "compact: one line")
    }
}
