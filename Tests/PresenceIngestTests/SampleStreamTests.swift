import PresenceIngest
import PresenceStore
import Testing
import XMPPStream

/// The shipped samples, read from the repository.
func sample(_ name: String) throws -> [UInt8] {
    // This file is Tests/PresenceStoreTests/SampleStreamTests.swift; the samples are in Samples/ at the root.
    let root = #filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
    let path = root + "/Samples/" + name
    guard let file = fopen(path, "rb") else { throw CancellationError() }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes.append(contentsOf: chunk[..<count])
    }
    return bytes
}

/// Feeds a whole sample and aggregates it per user, as every storage does.
func aggregate(
    _ bytes: [UInt8]
) -> (users: [BareJID: UserPresence], statistics: IngestStatistics, error: XMPPStreamError?) {
    var feed = PresenceFeed()
    var users: [BareJID: UserPresence] = [:]
    var time: Int64 = 0
    let apply: (PresenceUpdate) -> Void = { update in
        time += 1
        users[update.from.bare, default: UserPresence()].apply(
            update, receivedAt: PresenceTime(secondsSinceEpoch: 1_795_400_000 + time))
    }
    var failure: XMPPStreamError?
    do throws(XMPPStreamError) {
        try feed.feed(bytes, apply: apply)
        try feed.finish(apply: apply)
    } catch {
        failure = error
    }
    return (users, feed.statistics, failure)
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("The shipped samples show what their README says")
struct SampleStreamTests {
    @Test func multiDeviceSampleResolvesPrioritiesTiesAndClamping() throws {
        let result = aggregate(try sample("multi-device.xml"))
        #expect(result.error == nil)
        let alice = try #require(result.users[try BareJID("alice.smith@engineering.example.com")]?.status)
        // desk went away; laptop (10, delayed) beats phone (0).
        #expect(alice.presence.resource == "laptop")
        #expect(alice.presence.details.show == .dnd)
        let bob = try #require(result.users[try BareJID("bob.jones@sales.example.com")]?.status)
        #expect(bob.presence.resource == "tablet", "equal priorities: the most recent wins")
        #expect(bob.presence.details.status == "On the train", "the stream's language (en) wins over de")
        let carol = try #require(result.users[try BareJID("carol.kim@support.example.com")]?.status)
        #expect(carol.presence.details.priority == 127)
        let dave = try #require(result.users[try BareJID("dave.nowak@finance.example.com")]?.status)
        #expect(!dave.isAvailable)
        #expect(result.statistics.ignored == [.subscribe: 1, .probe: 1])
        #expect(result.statistics.rejected == [.missingFrom: 1, .invalidFrom(.forbiddenCharacterInLocalpart): 1])
    }

    @Test func attendanceSampleKeepsAttendanceAlsoWhenOffline() throws {
        let result = aggregate(try sample("attendance.xml"))
        #expect(result.error == nil)
        let judy = try #require(result.users[try BareJID("judy.silva@marketing.example.com")]?.status)
        #expect(!judy.isAvailable)
        #expect(judy.presence.details.attendance == .vacation)
        let grace = try #require(result.users[try BareJID("grace.park@people.example.com")]?.status)
        #expect(grace.presence.details.attendance == .offWork)
    }

    @Test func malformedSampleKeepsEverythingBeforeTheError() throws {
        let result = aggregate(try sample("malformed.xml"))
        let error = try #require(result.error)
        #expect(error.condition == .notWellFormed)
        #expect(error.position.line == 5)
        #expect(result.statistics.presenceUpdates == 2)
        #expect(result.users.count == 2)
    }
}
