import CSQLite
import Glibc
import PresenceModel
import PresenceStore

/// The disk tier's file: one SQLite database (`presence.sqlite`) in a data directory the process holds alone.
///
/// SQLite in WAL mode with `synchronous=FULL`: a write is one transaction, durable once it returns, so a crash
/// or kill -9 keeps everything the last completed flush wrote and never a torn record, and readers never wait
/// for the writer. One row per user (`jid` key, the encoded value, when it was written) in a table without
/// rowids: about 84 bytes per user on disk. Chosen over LMDB by measurement (Documentation/Benchmarks.md): a sixth of the
/// file size, format checks built in (application id, user version), and a full disk that fails a transaction
/// cleanly; LMDB reads and commits faster, neither of which is on the ingest path.
public final class SQLitePresenceStore: PresenceDiskStore {
    /// The file's application id (`PRES`): tells a PresenceStore disk tier from any other SQLite database.
    public static let applicationID: Int32 = 0x5052_4553
    /// The table layout and value encoding this program reads and writes.
    public static let formatVersion: Int64 = 1
    public static let fileName = "presence.sqlite"

    public let path: String
    public let directory: String
    private let lock: Locked<DataDirectoryLock>
    private let reader: Locked<Reader?>
    private let writer: Locked<Writer?>
    private let facts: Locked<Facts>
    private let removesDirectoryOnClose: Bool

    private struct Facts {
        var userCount = 0
        var lastWrite: PresenceTime?
    }

    /// Opens (or creates) the disk tier in `directory`, holding the directory against other processes.
    ///
    /// - Parameters:
    ///   - reset: set an existing file aside (renamed with the time) and start empty; what ``DiskTierError``
    ///     tells a user to do with a file this program cannot read.
    ///   - removesDirectoryOnClose: for a scratch tier (a replay's): the directory goes when the store closes.
    public init(directory: String, reset: Bool = false, removesDirectoryOnClose: Bool = false) throws(DiskTierError) {
        self.directory = directory
        self.removesDirectoryOnClose = removesDirectoryOnClose
        path = directory + "/" + Self.fileName
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw .notWritable(path: directory, reason: String(cString: strerror(errno)))
        }
        lock = Locked(try DataDirectoryLock(directory: directory))
        if reset { try Self.setAside(path) }
        try Self.checkHeader(path)
        let opened: (Writer, Reader, Facts)
        do {
            opened = try Self.open(path)
        } catch let error as DiskTierError {
            throw error
        } catch let error as SQLiteError {
            throw Self.diskError(error, path: path)
        } catch {
            throw .io(path: path, detail: "\(error)")
        }
        writer = Locked(opened.0)
        reader = Locked(opened.1)
        facts = Locked(opened.2)
    }

    deinit { close() }

    // MARK: Opening

    /// Renames the file and its WAL aside, so nothing is deleted by a reset.
    private static func setAside(_ path: String) throws(DiskTierError) {
        guard access(path, F_OK) == 0 else { return }
        let aside = path + ".set-aside-\(PresenceTime.now().millisecondsSinceEpoch)"
        for suffix in ["", "-wal", "-shm"] where access(path + suffix, F_OK) == 0 {
            if suffix == "-shm" {
                unlink(path + suffix)
            } else if rename(path + suffix, aside + suffix) != 0 {
                throw .notWritable(path: path + suffix, reason: String(cString: strerror(errno)))
            }
        }
    }

    /// A file that exists must begin with SQLite's header: anything else is refused before SQLite touches it.
    private static func checkHeader(_ path: String) throws(DiskTierError) {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return }
            throw .notWritable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { Glibc.close(descriptor) }
        var header = [UInt8](repeating: 0, count: 16)
        let count = header.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        if count == 0 { return }  // an empty file: SQLite makes it a new database
        guard count == 16, header == Array("SQLite format 3\0".utf8) else { throw .notADatabase(path: path) }
    }

    private static func open(_ path: String) throws -> (Writer, Reader, Facts) {
        let connection = try SQLiteConnection(path: path, create: true)
        try connection.execute("PRAGMA busy_timeout = 5000")
        let tables = try connection.integer("SELECT count(*) FROM sqlite_schema")
        if tables == 0 {
            try connection.execute(
                """
                PRAGMA journal_mode = WAL;
                PRAGMA application_id = \(applicationID);
                PRAGMA user_version = \(formatVersion);
                BEGIN;
                CREATE TABLE presence (jid TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL, written INTEGER NOT NULL)
                    WITHOUT ROWID;
                CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value) WITHOUT ROWID;
                INSERT INTO meta VALUES ('byte-order', '\(byteOrder)');
                COMMIT;
                """)
        } else {
            guard try connection.integer("PRAGMA application_id") == Int64(applicationID) else {
                throw DiskTierError.foreign(path: path)
            }
            let version = try connection.integer("PRAGMA user_version")
            guard version == formatVersion else {
                throw DiskTierError.schemaVersion(path: path, found: version, expected: formatVersion)
            }
            let order = try connection.prepare("SELECT value FROM meta WHERE key = 'byte-order'")
            let found = try order.step() ? order.text(0) ?? "" : ""
            order.reset()
            guard found == byteOrder else { throw DiskTierError.byteOrder(path: path, found: found) }
            try connection.execute("PRAGMA journal_mode = WAL")
        }
        try connection.execute("PRAGMA synchronous = FULL; PRAGMA cache_size = -16384")
        let userCount = Int(try connection.integer("SELECT count(*) FROM presence"))
        let last = try connection.prepare("SELECT value FROM meta WHERE key = 'last-write'")
        let lastWrite = try last.step() ? PresenceTime(millisecondsSinceEpoch: last.int64(0)) : nil
        let readConnection = try SQLiteConnection(path: path, create: false)
        try readConnection.execute("PRAGMA busy_timeout = 5000; PRAGMA cache_size = -16384")
        return (
            try Writer(connection), try Reader(readConnection), Facts(userCount: userCount, lastWrite: lastWrite)
        )
    }

    private static var byteOrder: String {
        1.littleEndian == 1 ? "little" : "big"
    }

    static func diskError(_ error: SQLiteError, path: String) -> DiskTierError {
        switch error.primary {
        case SQLITE_NOTADB: .notADatabase(path: path)
        case SQLITE_CORRUPT: .corrupt(path: path, detail: error.message)
        case SQLITE_FULL: .full(path: path, detail: error.message)
        case SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM: .notWritable(path: path, reason: error.message)
        default: .io(path: path, detail: error.description)
        }
    }

    // MARK: Reading

    public func read(_ key: BareJID) throws -> UserPresence? {
        try reader.withLock { reader throws(DiskTierError) -> UserPresence? in
            guard let reader else { throw .closed(path: path) }
            let statement = reader.select
            defer { statement.reset() }
            do throws(SQLiteError) {
                try statement.bind(1, text: key.rawValue)
                guard try statement.step() else { return nil }
            } catch {
                throw Self.diskError(error, path: path)
            }
            guard let value = statement.withBlob(0, PresenceRecord.decode) else {
                throw .corrupt(path: path, detail: "the record of \(key) is not one this program wrote")
            }
            return value
        }
    }

    public func forEach(_ body: (BareJID, UserPresence) throws -> Void) throws {
        try reader.withLock { reader in
            guard let reader else { throw DiskTierError.closed(path: path) }
            let statement = reader.scan
            defer { statement.reset() }
            do {
                while try statement.step() {
                    // Keys were normalized when they were written (the file is this program's, by its id and
                    // version); parsing a million of them again would double a restart.
                    guard let text = statement.text(0), !text.isEmpty,
                        let value = statement.withBlob(1, PresenceRecord.decode)
                    else {
                        throw DiskTierError.corrupt(
                            path: path, detail: "a record is not one this program wrote: \(statement.text(0) ?? "?")")
                    }
                    try body(BareJID(normalized: text), value)
                }
            } catch let error as SQLiteError {
                throw Self.diskError(error, path: path)
            }
        }
    }

    public var userCount: Int { facts.withLock { $0.userCount } }
    public var lastWrite: PresenceTime? { facts.withLock { $0.lastWrite } }

    public var fileBytes: Int {
        var total = 0
        for suffix in ["", "-wal"] {
            var status = stat()
            if stat(path + suffix, &status) == 0 { total += Int(status.st_blocks) * 512 }
        }
        return total
    }

    // MARK: Writing

    public func write(_ batch: [(key: BareJID, value: UserPresence?)], clearingFirst: Bool, at time: PresenceTime)
        throws -> DiskWriteReport
    {
        try writer.withLock { writer throws(DiskTierError) -> DiskWriteReport in
            guard let writer else { throw .closed(path: path) }
            var count = facts.withLock { $0.userCount }
            var bytes = 0
            do throws(SQLiteError) {
                try writer.connection.execute("BEGIN IMMEDIATE")
                if clearingFirst {
                    try writer.connection.execute("DELETE FROM presence")
                    count = 0
                }
                for (key, value) in batch {
                    let exists = try writer.exists(key)
                    if let value {
                        let record = PresenceRecord.encode(value)
                        try writer.upsert.bind(1, text: key.rawValue)
                        try writer.upsert.bind(2, blob: record)
                        try writer.upsert.bind(3, int64: time.millisecondsSinceEpoch)
                        defer { writer.upsert.reset() }
                        _ = try writer.upsert.step()
                        if !exists { count += 1 }
                        bytes += key.rawValue.utf8.count + record.count + 8
                    } else if exists {
                        try writer.delete.bind(1, text: key.rawValue)
                        defer { writer.delete.reset() }
                        _ = try writer.delete.step()
                        count -= 1
                        bytes += key.rawValue.utf8.count
                    }
                }
                try writer.lastWrite.bind(1, int64: time.millisecondsSinceEpoch)
                defer { writer.lastWrite.reset() }
                _ = try writer.lastWrite.step()
                try writer.connection.execute("COMMIT")
            } catch {
                try? writer.connection.execute("ROLLBACK")
                throw Self.diskError(error, path: path)
            }
            facts.withLock {
                $0.userCount = count
                $0.lastWrite = time
            }
            return DiskWriteReport(users: batch.count, bytes: bytes, userCount: count)
        }
    }

    public func close() {
        writer.withLock { writer in
            if let connection = writer?.connection {
                try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            }
            writer = nil
        }
        reader.withLock { $0 = nil }
        if removesDirectoryOnClose {
            for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
            unlink(directory + "/presence.lock")
            rmdir(directory)
        }
        lock.withLock { $0.release() }
    }

    /// The flusher's connection and statements.
    private final class Writer {
        let connection: SQLiteConnection
        let upsert: SQLiteStatement
        let delete: SQLiteStatement
        let find: SQLiteStatement
        let lastWrite: SQLiteStatement

        init(_ connection: SQLiteConnection) throws {
            self.connection = connection
            upsert = try connection.prepare(
                "INSERT INTO presence (jid, value, written) VALUES (?1, ?2, ?3) "
                    + "ON CONFLICT (jid) DO UPDATE SET value = excluded.value, written = excluded.written")
            delete = try connection.prepare("DELETE FROM presence WHERE jid = ?1")
            find = try connection.prepare("SELECT 1 FROM presence WHERE jid = ?1")
            lastWrite = try connection.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('last-write', ?1)")
        }

        func exists(_ key: BareJID) throws(SQLiteError) -> Bool {
            defer { find.reset() }
            try find.bind(1, text: key.rawValue)
            return try find.step()
        }
    }

    /// The readers' connection and statements.
    private final class Reader {
        let connection: SQLiteConnection
        let select: SQLiteStatement
        let scan: SQLiteStatement

        init(_ connection: SQLiteConnection) throws {
            self.connection = connection
            select = try connection.prepare("SELECT value FROM presence WHERE jid = ?1")
            scan = try connection.prepare("SELECT jid, value FROM presence")
        }
    }
}
