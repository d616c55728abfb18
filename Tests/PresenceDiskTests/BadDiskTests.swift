import Foundation
import PresenceDisk
import PresenceModel
import PresenceStore
import PresenceTestSupport
import Testing

/// Runs `sqlite3` (Debian's command-line shell) on a file, as a user or another program would.
private func sqlite3(_ path: String, _ sql: String) throws {
    #expect(try Tool.run("/usr/bin/sqlite3", [path, sql]) == 0, "sqlite3 \(sql)")
}

private func storeFile(_ directory: String) -> String { directory + "/" + SQLitePresenceStore.fileName }

/// A tier in `directory` with `users` users written and closed.
private func writeTier(_ directory: String, users: Int) throws {
    let storage = try tier(in: directory)
    for index in 0 ..< users {
        storage.apply(available("u\(index)@example.com/desk", status: "status \(index)"), receivedAt: time(1))
    }
    storage.close()
}

private func openError(_ directory: String) -> DiskTierError? {
    do {
        let storage = try tier(in: directory)
        storage.close()
        return nil
    } catch let error as DiskTierError {
        return error
    } catch {
        Issue.record("not a DiskTierError: \(error)")
        return nil
    }
}

@Suite("Bad files and bad disks get a clear error naming the file")
struct BadDiskTests {
    @Test func aFileThatIsNotADatabaseIsRefusedNotOverwritten() throws {
        try withDataDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let garbage = Data("these are someone's notes, not a database\n".utf8)
            try garbage.write(to: URL(fileURLWithPath: storeFile(directory)))
            let error = try #require(openError(directory))
            #expect(error == .notADatabase(path: storeFile(directory)))
            #expect(error.description.contains(storeFile(directory)) && error.description.contains("--disk-reset"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: storeFile(directory))) == garbage, "left as it was")
        }
    }

    @Test func aTruncatedFileIsReportedDamaged() throws {
        try withDataDirectory { directory in
            try writeTier(directory, users: 5000)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: storeFile(directory)))
            try handle.truncate(atOffset: 8192)
            try handle.close()
            let error = try #require(openError(directory))
            switch error {
            case .corrupt(let path, _), .notADatabase(let path): #expect(path == storeFile(directory))
            default: Issue.record("unexpected \(error)")
            }
        }
    }

    @Test func aForeignDatabaseIsRefused() throws {
        try withDataDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try sqlite3(storeFile(directory), "CREATE TABLE accounts (name TEXT); INSERT INTO accounts VALUES ('x');")
            #expect(openError(directory) == .foreign(path: storeFile(directory)))
        }
    }

    @Test func aTierOfAnotherFormatVersionIsRefused() throws {
        try withDataDirectory { directory in
            try writeTier(directory, users: 1)
            try sqlite3(storeFile(directory), "PRAGMA user_version = 99")
            #expect(openError(directory) == .schemaVersion(path: storeFile(directory), found: 99, expected: 1))
        }
    }

    @Test func aDamagedRecordIsRefusedNamingTheUser() throws {
        try withDataDirectory { directory in
            try writeTier(directory, users: 3)
            try sqlite3(storeFile(directory), "UPDATE presence SET value = x'0102' WHERE jid = 'u1@example.com'")
            let error = try #require(openError(directory))
            guard case .corrupt(let path, let detail) = error else { Issue.record("unexpected \(error)"); return }
            #expect(path == storeFile(directory))
            #expect(detail.contains("u1@example.com"))
        }
    }

    @Test func resetSetsTheUnreadableFileAsideAndStartsEmpty() throws {
        try withDataDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data("not a database".utf8).write(to: URL(fileURLWithPath: storeFile(directory)))
            let storage = try tier(in: directory, reset: true)
            #expect(storage.count == 0)
            storage.apply(available("a@example.com/x"), receivedAt: time(1))
            storage.close()
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(names.contains { $0.hasPrefix(SQLitePresenceStore.fileName + ".set-aside-") }, "\(names)")
            let reopened = try tier(in: directory)
            #expect(reopened.count == 1)
            reopened.close()
        }
    }

    @Test func aSecondOpenOfTheSameDirectoryIsRefused() throws {
        try withDataDirectory { directory in
            let first = try tier(in: directory)
            defer { first.close() }
            guard case .inUse(let held, let pid) = openError(directory) else { Issue.record("opened twice"); return }
            #expect(held == directory)
            #expect(pid == getpid())
        }
    }

    @Test func aDirectoryThatCannotBeCreatedIsReported() throws {
        try withDataDirectory { directory in
            try Data().write(to: URL(fileURLWithPath: directory))  // a file where the directory should be
            guard case .notWritable(let path, _) = openError(directory + "/data") else {
                Issue.record("opened under a file")
                return
            }
            #expect(path == directory + "/data")
        }
    }

    /// A small tmpfs of the test's own: a full disk for real (needs root, as the CI machine has).
    @Test(.enabled(if: geteuid() == 0, "mounting a small filesystem needs root"))
    func aFullDiskIsCountedWhileMemoryServesAndFlushingResumesWithRoom() throws {
        try withDataDirectory { mountPoint in
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
            try run("/bin/mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint)
            defer { try? run("/bin/umount", mountPoint) }
            let directory = mountPoint + "/data"
            let storage = try tier(in: directory)
            defer { storage.close() }
            storage.apply(available("first@example.com/x"), receivedAt: time(1))
            #expect(storage.flush())
            let filler = mountPoint + "/filler"
            _ = FileManager.default.createFile(atPath: filler, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: filler))
            let chunk = Data(count: 64 * 1024)
            while (try? handle.write(contentsOf: chunk)) != nil {}
            try handle.close()
            for index in 0 ..< 2000 {
                storage.apply(available("u\(index)@example.com/desk", status: String(repeating: "x", count: 200)),
                    receivedAt: time(2))
            }
            #expect(!storage.flush(), "nothing fits")
            let full = storage.tierStatistics
            #expect(full.failedFlushes >= 1)
            #expect(full.dirty == 2000, "kept for the next flush")
            #expect(full.lastError?.contains("full") == true, "\(full.lastError ?? "")")
            #expect(storage.get(jid("u1999@example.com"))?.status?.isAvailable == true, "memory still answers")
            try FileManager.default.removeItem(atPath: filler)
            #expect(storage.flush(), "room again")
            #expect(storage.tierStatistics.dirty == 0)
            #expect(storage.tierStatistics.diskUsers == 2001)
            #expect(storage.tierStatistics.lastError == nil)
        }
    }
}

private func run(_ tool: String, _ arguments: String...) throws {
    guard try Tool.run(tool, arguments) == 0 else { throw CocoaError(.fileWriteUnknown) }
}
