import CSQLite
import Primitives

/// Records that must outlive a restart on a single node (the feed ids apps were given), kept
/// apart from the cache, which may lose anything: one SQLite file in the data directory, in
/// WAL mode with `synchronous=NORMAL` (a commit is durable once the WAL is checkpointed or the
/// OS flushes it; a crash of the process loses nothing, a power cut at most the last moments).
/// One connection behind a lock: records are written rarely (a feed named for the first time)
/// and read on a cache miss, microseconds each.
public final class SQLiteRecords: Sendable {
    public struct OpenError: Error, CustomStringConvertible {
        public let description: String
    }

    private final class Connection: @unchecked Sendable {
        // Used only under `SQLiteRecords.connection`'s lock.
        let db: OpaquePointer
        let select: OpaquePointer
        let upsert: OpaquePointer
        let upsertUnlessBehind: OpaquePointer
        let count: OpaquePointer
        let keys: OpaquePointer

        init(db: OpaquePointer, select: OpaquePointer, upsert: OpaquePointer, upsertUnlessBehind: OpaquePointer, count: OpaquePointer, keys: OpaquePointer) {
            self.db = db
            self.select = select
            self.upsert = upsert
            self.upsertUnlessBehind = upsertUnlessBehind
            self.count = count
            self.keys = keys
        }

        deinit {
            for statement in [select, upsert, upsertUnlessBehind, count, keys] { sqlite3_finalize(statement) }
            sqlite3_close_v2(db)
        }
    }

    private let connection: Locked<Connection>
    public let path: String

    /// Opens (creating) the store at `path`; its directory must exist and be writable.
    public init(path: String) throws(OpenError) {
        self.path = path
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let db = handle else {
            let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let handle { sqlite3_close_v2(handle) }
            throw OpenError(description: "cannot open \(path): \(reason)")
        }
        // Another process holding the file (a second replica on the same directory) waits, bounded.
        sqlite3_busy_timeout(db, 2000)
        let setup = """
            PRAGMA journal_mode=WAL;
            PRAGMA synchronous=NORMAL;
            CREATE TABLE IF NOT EXISTS records (
                kind TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL, updated INTEGER NOT NULL,
                PRIMARY KEY (kind, key)) WITHOUT ROWID;
            """
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, setup, nil, nil, &message) == SQLITE_OK else {
            let reason = message.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(message)
            sqlite3_close_v2(db)
            throw OpenError(description: "cannot set up \(path): \(reason)")
        }
        func prepare(_ sql: String) throws(OpenError) -> OpaquePointer {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                let reason = String(cString: sqlite3_errmsg(db))
                sqlite3_close_v2(db)
                throw OpenError(description: "cannot prepare a statement on \(path): \(reason)")
            }
            return statement
        }
        let select = try prepare("SELECT value FROM records WHERE kind = ?1 AND key = ?2")
        let upsert = try prepare(
            "INSERT INTO records (kind, key, value, updated) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (kind, key) DO UPDATE SET value = ?3, updated = ?4")
        // `updated` holds the caller's order for these: a write behind the kept one is dropped.
        let upsertUnlessBehind = try prepare(
            "INSERT INTO records (kind, key, value, updated) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (kind, key) DO UPDATE SET value = ?3, updated = ?4 "
                + "WHERE updated <= ?4")
        let count = try prepare("SELECT count(*) FROM records WHERE kind = ?1")
        // The primary key's order: a prefix is a range scan.
        let keys = try prepare("SELECT key FROM records WHERE kind = ?1 AND key >= ?2 AND key < ?3 ORDER BY key LIMIT ?4")
        connection = Locked(Connection(db: db, select: select, upsert: upsert, upsertUnlessBehind: upsertUnlessBehind, count: count, keys: keys))
    }

    /// The value kept under (`kind`, `key`); nil when there is none (or the file cannot be read).
    public func value(_ kind: String, _ key: String) -> [UInt8]? {
        connection.withLock { c in
            defer { sqlite3_reset(c.select) }
            guard Self.bind(kind, 1, c.select), Self.bind(key, 2, c.select), sqlite3_step(c.select) == SQLITE_ROW else { return nil }
            let length = Int(sqlite3_column_bytes(c.select, 0))
            guard length > 0, let bytes = sqlite3_column_blob(c.select, 0) else { return length == 0 ? [] : nil }
            return Array(UnsafeRawBufferPointer(start: bytes, count: length))
        }
    }

    /// Keeps `value` under (`kind`, `key`), replacing what was there; false when it could not be written.
    @discardableResult
    public func put(_ kind: String, _ key: String, _ value: [UInt8], at seconds: Int64) -> Bool {
        connection.withLock { c in Self.write(c.upsert, kind, key, value, seconds) }
    }

    /// Keeps `value` under (`kind`, `key`) unless the one kept there has a higher `order`
    /// (kept in place of the time written); false when it was not written.
    @discardableResult
    public func putUnlessBehind(_ kind: String, _ key: String, _ value: [UInt8], order: Int64) -> Bool {
        connection.withLock { c in Self.write(c.upsertUnlessBehind, kind, key, value, order) && sqlite3_changes(c.db) > 0 }
    }

    private static func write(_ statement: OpaquePointer, _ kind: String, _ key: String, _ value: [UInt8], _ number: Int64) -> Bool {
        defer { sqlite3_reset(statement) }
        let bound =
            value.isEmpty
            ? sqlite3_bind_zeroblob(statement, 3, 0) : value.withUnsafeBytes { csqlite_bind_blob(statement, 3, $0.baseAddress, Int32($0.count)) }
        guard bind(kind, 1, statement), bind(key, 2, statement), bound == SQLITE_OK, sqlite3_bind_int64(statement, 4, number) == SQLITE_OK
        else { return false }
        return sqlite3_step(statement) == SQLITE_DONE
    }

    /// The keys of `kind` that start with `prefix`, in order, at most `limit`.
    public func keys(_ kind: String, prefix: String, limit: Int) -> [String] {
        connection.withLock { c in
            defer { sqlite3_reset(c.keys) }
            // Every key with the prefix sorts below the prefix followed by the highest byte.
            guard Self.bind(kind, 1, c.keys), Self.bind(prefix, 2, c.keys), Self.bind(prefix + "\u{10FFFF}", 3, c.keys),
                sqlite3_bind_int64(c.keys, 4, Int64(max(0, limit))) == SQLITE_OK
            else { return [] }
            var out: [String] = []
            while sqlite3_step(c.keys) == SQLITE_ROW, let text = sqlite3_column_text(c.keys, 0) { out.append(String(cString: text)) }
            return out
        }
    }

    /// Forgets the records of `kind` last written before `seconds` (Unix); how many went.
    @discardableResult
    public func forget(_ kind: String, writtenBefore seconds: Int64) -> Int {
        connection.withLock { c in
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(c.db, "DELETE FROM records WHERE kind = ?1 AND updated < ?2", -1, &statement, nil) == SQLITE_OK, let statement
            else { return 0 }
            defer { sqlite3_finalize(statement) }
            guard Self.bind(kind, 1, statement), sqlite3_bind_int64(statement, 2, seconds) == SQLITE_OK, sqlite3_step(statement) == SQLITE_DONE
            else { return 0 }
            return Int(sqlite3_changes(c.db))
        }
    }

    /// Records of `kind` kept.
    public func count(_ kind: String) -> Int {
        connection.withLock { c in
            defer { sqlite3_reset(c.count) }
            guard Self.bind(kind, 1, c.count), sqlite3_step(c.count) == SQLITE_ROW else { return 0 }
            return Int(sqlite3_column_int64(c.count, 0))
        }
    }

    private static func bind(_ text: String, _ index: Int32, _ statement: OpaquePointer) -> Bool {
        text.withCString { csqlite_bind_text(statement, index, $0, Int32(text.utf8.count)) } == SQLITE_OK
    }
}
