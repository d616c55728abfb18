import CSQLite

/// One connection to an SQLite file, used by one thread at a time (its owner's lock or thread says which):
/// statements prepared once, errors as ``SQLiteError`` with the file's path and SQLite's own message.
final class SQLiteConnection {
    let path: String
    private var handle: OpaquePointer?

    init(path: String, create: Bool) throws(SQLiteError) {
        self.path = path
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0)
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK else {
            let error = SQLiteError(code: code, message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? "")
            sqlite3_close_v2(handle)
            handle = nil
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit { close() }

    func close() {
        guard let handle else { return }
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// Runs statements that return no rows.
    func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code) }
    }

    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code) }
        return SQLiteStatement(statement, connection: self)
    }

    /// The one integer a query such as `PRAGMA user_version` returns.
    func integer(_ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }

    func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? "")
    }
}

/// A prepared statement of a ``SQLiteConnection``, reset after each use.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private unowned let connection: SQLiteConnection

    init(_ statement: OpaquePointer, connection: SQLiteConnection) {
        self.statement = statement
        self.connection = connection
    }

    deinit { sqlite3_finalize(statement) }

    func bind(_ index: Int32, text: String) throws(SQLiteError) {
        var text = text
        let code = text.withUTF8 { sqlite3_bind_text(statement, index, $0.baseAddress, Int32($0.count), SQLITE_TRANSIENT) }
        guard code == SQLITE_OK else { throw connection.error(code) }
    }

    func bind(_ index: Int32, blob: [UInt8]) throws(SQLiteError) {
        let code = blob.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), SQLITE_TRANSIENT) }
        guard code == SQLITE_OK else { throw connection.error(code) }
    }

    func bind(_ index: Int32, int64: Int64) throws(SQLiteError) {
        let code = sqlite3_bind_int64(statement, index, int64)
        guard code == SQLITE_OK else { throw connection.error(code) }
    }

    /// Steps once: true with a row to read, false when done.
    func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code:
            sqlite3_reset(statement)
            throw connection.error(code)
        }
    }

    func reset() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    /// The column's text, or nil when it is not valid UTF-8 text.
    func text(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(validating: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Calls `body` with the column's bytes, valid only during the call.
    func withBlob<R>(_ column: Int32, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let base = sqlite3_column_blob(statement, column)
        let count = Int(sqlite3_column_bytes(statement, column))
        return body(UnsafeRawBufferPointer(start: base, count: base == nil ? 0 : count))
    }
}

/// `SQLITE_TRANSIENT`: SQLite copies the bound bytes (the C macro does not import).
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// An SQLite result code with SQLite's message.
struct SQLiteError: Error, CustomStringConvertible {
    var code: Int32
    var message: String

    /// The primary result code (the low byte of an extended one).
    var primary: Int32 { code & 0xFF }

    var description: String { "\(message) (SQLite \(code))" }
}
