import Foundation
import Records
import TestSupport
import Testing

/// The single node's records: what is put is read back, replaced by a later put, and still
/// there when the file is opened again (a restart); kinds keep apart.
@Suite(.offPool) struct SQLiteRecordsTests {
    @Test func recordsOutliveTheConnectionThatWroteThem() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("records-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("records.sqlite").path
        do {
            let store = try SQLiteRecords(path: path)
            #expect(store.value("feedid", "1") == nil)
            #expect(store.put("feedid", "1", Array("https://a.example/feed".utf8), at: 1))
            #expect(store.put("feedid", "1", Array("https://b.example/feed".utf8), at: 2))
            #expect(store.put("other", "1", [], at: 2))
            #expect(store.count("feedid") == 1)
        }
        let reopened = try SQLiteRecords(path: path)
        #expect(reopened.value("feedid", "1") == Array("https://b.example/feed".utf8))
        #expect(reopened.value("other", "1") == [])
        #expect(reopened.value("feedid", "2") == nil)
    }

    @Test func aPathThatCannotBeOpenedIsAnError() {
        #expect(throws: SQLiteRecords.OpenError.self) { try SQLiteRecords(path: "/proc/no-such-dir/records.sqlite") }
    }
}
