import TestSupport
import Foundation
import Testing
@testable import PostgresClient

@Suite struct PGConnectionTests {
    @Test func connectFailureIsConnectionFailed() {
        do {
            _ = try PGConnection(connectionString: "host=/nonexistent-folder-xyz port=1 connect_timeout=2")
            Issue.record("connect should have failed")
        } catch let error as PGError {
            #expect(error.code == .connectionFailed)
            #expect(!error.message.isEmpty)
        } catch { Issue.record("unexpected \(error)") }
    }

    @Test func typedDecodingRoundTrips() throws {
        let connection = try PGConnection(connectionString: try TestCluster.freshDatabase())
        let when = Date(timeIntervalSince1970: 1_700_000_000.123456)
        let result = try connection.query(
            "SELECT $1::text AS name, $2::int AS count, $3::int8 AS big, $4::float8 AS ratio, $5::bool AS flag, "
                + "$6::timestamptz AS at, NULL::text AS missing",
            ["hello", 42, Int64(9_000_000_000), 0.1, true, when])
        #expect(result.rowCount == 1)
        let row = result[0]
        #expect(try row.decode(String.self, column: "name") == "hello")
        #expect(try row.decode(Int.self, column: "count") == 42)
        #expect(try row.decode(Int64.self, column: "big") == 9_000_000_000)
        #expect(try row.decode(Double.self, column: "ratio") == 0.1)
        #expect(try row.decode(Bool.self, column: "flag") == true)
        let decoded = try row.decode(Date.self, column: "at")
        #expect(abs(decoded.timeIntervalSince1970 - when.timeIntervalSince1970) < 0.000_002)
        #expect(try row.decode(String?.self, column: "missing") == nil)
        #expect(try row.decode(Date?.self, column: "at") != nil)
    }

    /// Every byte value survives a bytea parameter, an array element and the column read back;
    /// PostgreSQL agrees on the length (the hex text is not stored as text).
    @Test func byteaRoundTripsEveryByte() throws {
        let connection = try PGConnection(connectionString: try TestCluster.freshDatabase())
        let bytes = PGBytea((0..<1024).map { UInt8(truncatingIfNeeded: $0 * 37) } + Array(0...255))
        let row = try connection.query("SELECT $1::bytea AS b, octet_length($1::bytea)::bigint AS n", [bytes]).rows[0]
        #expect(try row.decode(PGBytea.self, column: "b") == bytes)
        #expect(try row.decode(Int.self, column: "n") == bytes.bytes.count)
        let empty = try connection.query("SELECT $1::bytea AS b", [PGBytea([])]).rows[0]
        #expect(try empty.decode(PGBytea.self, column: "b") == PGBytea([]))
        let array = try connection.query("SELECT (unnest($1::bytea[])) AS b", [[bytes, PGBytea([0, 255])]]).rows
        #expect(try array.map { try $0.decode(PGBytea.self, column: "b") } == [bytes, PGBytea([0, 255])])
        #expect(throws: PGError.self) { try PGBytea.pgDecode(text: "\\xzz", column: "b") }
    }

    @Test func decodeErrorsNameTheColumn() throws {
        let connection = try PGConnection(connectionString: try TestCluster.freshDatabase())
        let row = try connection.query("SELECT 'abc'::text AS speaker_label, NULL::int AS word_count")[0]
        let typeError = #expect(throws: PGError.self) { try row.decode(Int.self, column: "speaker_label") }
        #expect(typeError?.code == .decodeFailed)
        #expect(typeError?.column == "speaker_label")
        #expect(typeError?.message.contains("speaker_label") == true)
        let nullError = #expect(throws: PGError.self) { try row.decode(Int.self, column: "word_count") }
        #expect(nullError?.column == "word_count")
        let missing = #expect(throws: PGError.self) { try row.decode(Int.self, column: "nope") }
        #expect(missing?.column == "nope")
    }

    @Test func queryErrorsCarrySQLState() throws {
        let connection = try PGConnection(connectionString: try TestCluster.freshDatabase())
        let error = #expect(throws: PGError.self) { try connection.query("SELECT * FROM no_such_table") }
        #expect(error?.code == .queryFailed)
        #expect(error?.sqlState == "42P01")
        // The connection stays usable after a failed statement.
        #expect(try connection.query("SELECT 1 AS one")[0].decode(Int.self, column: "one") == 1)
    }

    /// Hostile text goes through bind parameters and through the array-literal path unchanged.
    @Test func hostileTextRoundTripsAsParameterAndArrayElement() throws {
        let connection = try PGConnection(connectionString: try TestCluster.freshDatabase())
        try connection.execute("CREATE TABLE t (id int PRIMARY KEY, body text)")
        let hostile = [
            "Robert'); DROP TABLE t; --", "back\\slash\\\\", "{braces},\"quotes\"", "a,b,c", "NULL", "",
            " padded ", "ünïcødé 🎙️ 日本語", "tab\tnew\nline\u{1}bell\u{7}", "\\\"", "}", "{",
        ]
        for (index, text) in hostile.enumerated() {
            try connection.execute("INSERT INTO t VALUES ($1, $2)", [index, text])
        }
        let rows = try connection.query("SELECT id, body FROM t ORDER BY id").rows
        #expect(try rows.map { try $0.decode(String.self, column: "body") } == hostile)

        try connection.execute("DELETE FROM t")
        let ids = Array(hostile.indices)
        let inserted = try connection.execute(
            "INSERT INTO t SELECT * FROM unnest($1::int[], $2::text[])", [ids, hostile])
        #expect(inserted == hostile.count)
        let viaArray = try connection.query("SELECT body FROM t ORDER BY id").rows
        #expect(try viaArray.map { try $0.decode(String.self, column: "body") } == hostile)
        #expect(try connection.query("SELECT count(*) AS n FROM t")[0].decode(Int.self, column: "n") == hostile.count)
    }

    @Test func arrayLiteralsCarryNullsAndSpecialDoubles() throws {
        let connection = try PGConnection(connectionString: try TestCluster.freshDatabase())
        let values: [Double?] = [1.5, nil, -0.25, .infinity, 1e-7]
        let rows = try connection.query(
            "SELECT v, ord FROM unnest($1::float8[]) WITH ORDINALITY AS u(v, ord) ORDER BY ord", [values]).rows
        #expect(try rows.map { try $0.decode(Double?.self, column: "v") } == values)
        let names: [String?] = ["NULL", nil]
        let named = try connection.query(
            "SELECT n FROM unnest($1::text[]) WITH ORDINALITY AS u(n, ord) ORDER BY ord", [names]).rows
        #expect(try named.map { try $0.decode(String?.self, column: "n") } == names)
    }

    @Test func nulInParameterIsEncodeError() throws {
        let connection = try PGConnection(connectionString: try TestCluster.freshDatabase())
        let error = #expect(throws: PGError.self) { try connection.query("SELECT $1::text", ["a\u{0}b"]) }
        #expect(error?.code == .encodeFailed)
    }

    @Test func transactionRollsBackOnError() throws {
        let connection = try PGConnection(connectionString: try TestCluster.freshDatabase())
        try connection.execute("CREATE TABLE t (id int PRIMARY KEY)")
        struct Boom: Error {}
        #expect(throws: Boom.self) {
            try connection.transaction { conn in
                try conn.execute("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        try connection.transaction { conn in try conn.execute("INSERT INTO t VALUES (2)") }
        let ids = try connection.query("SELECT id FROM t").rows.map { try $0.decode(Int.self, column: "id") }
        #expect(ids == [2])
    }

    @Test func preparedStatementsRun() throws {
        let connection = try PGConnection(connectionString: try TestCluster.freshDatabase())
        try connection.prepareIfNeeded(name: "add", sql: "SELECT $1::int + $2::int AS sum", parameterCount: 2)
        try connection.prepareIfNeeded(name: "add", sql: "SELECT $1::int + $2::int AS sum", parameterCount: 2)
        #expect(try connection.queryPrepared(name: "add", [2, 3])[0].decode(Int.self, column: "sum") == 5)
    }
}
