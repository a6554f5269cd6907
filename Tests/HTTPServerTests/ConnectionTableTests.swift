import TestSupport
import Testing

@testable import HTTPServer

/// The loop's fd-indexed table: what a dictionary did, for any descriptor the kernel hands out.
@Suite(.offPool) struct ConnectionTableTests {
    static func connection(_ fd: Int32) -> Connection {
        Connection(fd: fd, id: UInt64(fd), limits: ParseLimits(), now: 0, headerTimeout: 10)
    }

    @Test func storesFindsAndRemovesByDescriptor() {
        var table = ConnectionTable()
        #expect(table.isEmpty && table[3] == nil && table[-1] == nil && table[100_000] == nil)
        let a = Self.connection(3), b = Self.connection(700)
        table[3] = a
        table[700] = b  // far past the end: the table grows
        #expect(table.count == 2)
        #expect(table[3] === a && table[700] === b && table[4] == nil)
        table[3] = Self.connection(3)  // replaced, not added
        #expect(table.count == 2 && table[3] !== a)
        table[3] = nil
        table[3] = nil  // removing twice does not count twice
        table[5000] = nil  // removing what was never there does not grow it
        table[-7] = b  // not a descriptor: ignored
        #expect(table.count == 1 && table[3] == nil && table[-7] == nil)
        #expect(table.values.map(\.fd) == [700])
        table[700] = nil
        #expect(table.isEmpty && table.values.isEmpty)
    }
}
