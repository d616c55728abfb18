// The two candidate engines for the disk tier, on the workload the tier gives them: one transaction per flush of
// N distinct users into a table of 1M users, point reads of random users, a full scan (what a restart reads) and
// the file's size. The system libraries, through the same kind of module as the product's (pkg-config `sqlite3`,
// `lmdb`).
//
//   swift run -c release --package-path Benchmarks DiskEngines [users] [directory]
import CLMDBReference
import CSQLiteReference
import Foundation

let users = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1])! : 1_000_000
let directory = CommandLine.arguments.count > 2 ? CommandLine.arguments[2] : NSTemporaryDirectory()
let valueSize = 48  // a typical encoded presence: one resource, a short status
let readCount = 200_000

func key(_ index: Int) -> [UInt8] { Array("user\(index)@example.com".utf8) }
func value(_ index: Int, round: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: valueSize)
    for position in 0 ..< valueSize { bytes[position] = UInt8(truncatingIfNeeded: index &* 31 &+ position &+ round) }
    return bytes
}

func seconds(_ body: () -> Void) -> Double {
    let start = ContinuousClock.now
    body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

func fileBytes(_ paths: [String]) -> Int {
    paths.reduce(0) { total, path in
        total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
    }
}

var generator = SystemRandomNumberGenerator()
let flushSizes = [1_000, 10_000, 100_000]
let randomReads = (0 ..< readCount).map { _ in Int.random(in: 0 ..< users, using: &generator) }

protocol Engine {
    var name: String { get }
    /// Writes `indices` in one transaction.
    func write(_ indices: some Sequence<Int>, round: Int)
    func read(_ index: Int) -> Int
    func scan() -> Int
    func close()
    var files: [String] { get }
}

final class SQLiteEngine: Engine {
    let name: String
    let path: String
    var db: OpaquePointer?
    var upsert: OpaquePointer?
    var select: OpaquePointer?

    let sortsKeys: Bool

    init(path: String, synchronous: String, cacheMiB: Int = 2, pageSize: Int = 4096, sortsKeys: Bool = false) {
        self.path = path
        self.sortsKeys = sortsKeys
        name = "sqlite wal sync=\(synchronous) cache=\(cacheMiB)MiB page=\(pageSize)\(sortsKeys ? " sorted" : "")"
        for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
        precondition(sqlite3_open(path, &db) == SQLITE_OK)
        exec("PRAGMA page_size=\(pageSize); PRAGMA journal_mode=WAL; PRAGMA synchronous=\(synchronous); PRAGMA cache_size=-\(cacheMiB * 1024);")
        exec(
            "CREATE TABLE presence(jid TEXT PRIMARY KEY, value BLOB NOT NULL, written INTEGER NOT NULL) WITHOUT ROWID")
        sqlite3_prepare_v2(
            db, "INSERT INTO presence(jid, value, written) VALUES(?1, ?2, ?3) "
                + "ON CONFLICT(jid) DO UPDATE SET value=excluded.value, written=excluded.written", -1, &upsert, nil)
        sqlite3_prepare_v2(db, "SELECT value FROM presence WHERE jid = ?1", -1, &select, nil)
    }

    func exec(_ sql: String) { precondition(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK, sql) }

    func write(_ indices: some Sequence<Int>, round: Int) {
        exec("BEGIN")
        let ordered = sortsKeys ? indices.sorted { key($0).lexicographicallyPrecedes(key($1)) } : Array(indices)
        for index in ordered {
            let key = key(index)
            let value = value(index, round: round)
            key.withUnsafeBytes { sqlite3_bind_text(upsert, 1, $0.baseAddress, Int32($0.count), nil) }
            value.withUnsafeBytes { sqlite3_bind_blob(upsert, 2, $0.baseAddress, Int32($0.count), nil) }
            sqlite3_bind_int64(upsert, 3, Int64(round))
            precondition(sqlite3_step(upsert) == SQLITE_DONE)
            sqlite3_reset(upsert)
        }
        exec("COMMIT")
    }

    func read(_ index: Int) -> Int {
        let key = key(index)
        key.withUnsafeBytes { sqlite3_bind_text(select, 1, $0.baseAddress, Int32($0.count), nil) }
        var size = 0
        if sqlite3_step(select) == SQLITE_ROW { size = Int(sqlite3_column_bytes(select, 0)) }
        sqlite3_reset(select)
        return size
    }

    func scan() -> Int {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT jid, value, written FROM presence", -1, &statement, nil)
        var total = 0
        while sqlite3_step(statement) == SQLITE_ROW {
            total += Int(sqlite3_column_bytes(statement, 0)) + Int(sqlite3_column_bytes(statement, 1))
            _ = sqlite3_column_blob(statement, 1)
            _ = sqlite3_column_text(statement, 0)
        }
        sqlite3_finalize(statement)
        return total
    }

    func close() {
        exec("PRAGMA wal_checkpoint(TRUNCATE)")
        sqlite3_finalize(upsert)
        sqlite3_finalize(select)
        sqlite3_close(db)
    }

    var files: [String] { [path, path + "-wal"] }
}

final class LMDBEngine: Engine {
    let name = "lmdb"
    let path: String
    var environment: OpaquePointer?
    var database: MDB_dbi = 0

    init(path: String) {
        self.path = path
        unlink(path)
        unlink(path + "-lock")
        precondition(mdb_env_create(&environment) == 0)
        mdb_env_set_mapsize(environment, 8 << 30)
        precondition(mdb_env_open(environment, path, UInt32(MDB_NOSUBDIR), 0o644) == 0)
        var transaction: OpaquePointer?
        mdb_txn_begin(environment, nil, 0, &transaction)
        mdb_dbi_open(transaction, nil, 0, &database)
        mdb_txn_commit(transaction)
    }

    func write(_ indices: some Sequence<Int>, round: Int) {
        var transaction: OpaquePointer?
        precondition(mdb_txn_begin(environment, nil, 0, &transaction) == 0)
        for index in indices {
            var key = key(index)
            var value = value(index, round: round) + withUnsafeBytes(of: Int64(round)) { Array($0) }
            key.withUnsafeMutableBytes { keyBytes in
                value.withUnsafeMutableBytes { valueBytes in
                    var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
                    var dataValue = MDB_val(mv_size: valueBytes.count, mv_data: valueBytes.baseAddress)
                    precondition(mdb_put(transaction, database, &keyValue, &dataValue, 0) == 0)
                }
            }
        }
        precondition(mdb_txn_commit(transaction) == 0)
    }

    func read(_ index: Int) -> Int {
        var transaction: OpaquePointer?
        mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &transaction)
        var key = key(index)
        var size = 0
        key.withUnsafeMutableBytes { keyBytes in
            var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
            var dataValue = MDB_val()
            if mdb_get(transaction, database, &keyValue, &dataValue) == 0 { size = dataValue.mv_size }
        }
        mdb_txn_abort(transaction)
        return size
    }

    func scan() -> Int {
        var transaction: OpaquePointer?
        mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &transaction)
        var cursor: OpaquePointer?
        mdb_cursor_open(transaction, database, &cursor)
        var keyValue = MDB_val()
        var dataValue = MDB_val()
        var total = 0
        var operation = MDB_FIRST
        while mdb_cursor_get(cursor, &keyValue, &dataValue, operation) == 0 {
            total += keyValue.mv_size + dataValue.mv_size
            operation = MDB_NEXT
        }
        mdb_cursor_close(cursor)
        mdb_txn_abort(transaction)
        return total
    }

    func close() { mdb_env_close(environment) }

    var files: [String] { [path] }

    /// The pages in use, not the sparse file's apparent size.
    var usedBytes: Int {
        var info = MDB_envinfo()
        var stat = MDB_stat()
        mdb_env_info(environment, &info)
        mdb_env_stat(environment, &stat)
        return (info.me_last_pgno + 1) * Int(stat.ms_psize)
    }
}

func run(_ engine: some Engine) {
    print("== \(engine.name), \(users) users, \(valueSize)-byte values")
    var loadTime = 0.0
    let batch = 100_000
    for start in stride(from: 0, to: users, by: batch) {
        loadTime += seconds { engine.write(start ..< min(users, start + batch), round: 0) }
    }
    print(String(format: "load %d users in %d-user commits: %.2f s (%.0f users/s)", users, batch, loadTime,
        Double(users) / loadTime))
    for (round, size) in flushSizes.enumerated() {
        var times: [Double] = []
        for repetition in 0 ..< 3 {
            var random = SystemRandomNumberGenerator()
            let chosen = (0 ..< size).map { _ in Int.random(in: 0 ..< users, using: &random) }
            times.append(seconds { engine.write(chosen, round: round * 3 + repetition + 1) })
        }
        let best = times.min()!
        print(String(format: "commit %6d random distinct users: best %.1f ms, median %.1f ms (%.0f users/s)", size,
            best * 1000, times.sorted()[1] * 1000, Double(size) / times.sorted()[1]))
    }
    var sink = 0
    let readTime = seconds { for index in randomReads { sink &+= engine.read(index) } }
    print(String(format: "point reads: %.0f/s (%.2f µs each)", Double(readCount) / readTime,
        readTime / Double(readCount) * 1e6))
    var scanned = 0
    let scanTime = seconds { scanned = engine.scan() }
    print(String(format: "full scan: %.3f s (%d bytes)", scanTime, scanned))
    if let lmdb = engine as? LMDBEngine {
        print(String(format: "pages in use: %.1f MB, %.0f bytes/user", Double(lmdb.usedBytes) / 1e6,
            Double(lmdb.usedBytes) / Double(users)))
    }
    engine.close()
    let bytes = fileBytes(engine.files)
    print(String(format: "file: %.1f MB, %.0f bytes/user%@", Double(bytes) / 1e6, Double(bytes) / Double(users),
        sink == 0 ? " (no reads?)" : ""))
}

run(SQLiteEngine(path: directory + "/engines.sqlite", synchronous: "FULL"))
run(SQLiteEngine(path: directory + "/engines-normal.sqlite", synchronous: "NORMAL"))
run(SQLiteEngine(path: directory + "/engines-cache.sqlite", synchronous: "FULL", cacheMiB: 64))
run(SQLiteEngine(path: directory + "/engines-1k.sqlite", synchronous: "FULL", cacheMiB: 64, pageSize: 1024))
run(LMDBEngine(path: directory + "/engines.lmdb"))
