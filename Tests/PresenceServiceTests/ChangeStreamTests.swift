import Foundation
import PresenceService
import PresenceStore
import PresenceTestSupport
import PresenceWire
import ServerSentEvents
import Testing

@Suite("The change stream: GET /v1/presence/events")
struct ChangeStreamTests {
    static let header = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>"

    @Test func aWatcherSeesTheSnapshotThenEachVisibleChangeAndNothingForAnInvisibleOne() async throws {
        try await withService { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send(
                Self.header + "<presence from='alice@example.com/desk'><status>Here</status></presence>")
            #expect(
                try await eventually { try await state(of: "alice@example.com", port: ports.http)?.state == .available }
            )

            let stream = try await EventClient.open("?jid=bob@example.com&jid=alice@example.com", port: ports.http)
            defer { stream.close() }
            #expect(stream.status == 200)
            let first = try await stream.nextAnswer()
            let second = try await stream.nextAnswer()
            #expect(first.result.jid == "alice@example.com" && first.result.status == "Here")
            #expect(second.result.jid == "bob@example.com" && second.result.state == .unknown)
            let snapshotID = try #require(second.id)
            #expect(first.id == "\(snapshotID):1", "snapshot ids say how far the snapshot got")

            try await feeder.send(
                "<presence from='alice@example.com/desk'><show>dnd</show><status>Focus</status></presence>")
            let change = try await stream.nextAnswer()
            #expect(change.result.jid == "alice@example.com")
            #expect(change.result.show == .dnd && change.result.status == "Focus")
            #expect(changeNumber(change.id) ?? 0 > changeNumber(snapshotID) ?? .max)

            // Only the priority changes: nothing a screen shows. Then bob appears: the next event is bob's.
            try await feeder.send(
                "<presence from='alice@example.com/desk'><show>dnd</show><status>Focus</status><priority>7</priority></presence>"
                    + "<presence from='carol@example.com/desk'/>" + "<presence from='bob@example.com/phone'/>")
            let next = try await stream.nextAnswer()
            #expect(next.result.jid == "bob@example.com", "an invisible change and an unwatched JID send nothing")
        }
    }

    @Test func aSnapshotInChunksThenItsChangesMissNobodyAndNeverShowAnOlderStatusWhileTheFeedRuns() async throws {
        try await withService { ports in
            // A snapshot in many chunks either way; fewer people under ThreadSanitizer, where the whole suite beside
            // this test makes every step several times slower.
            let people = underThreadSanitizer ? 2_000 : 10_000
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            func change(_ person: Int, round: Int) -> String {
                "<presence from='p\(person)@example.com/desk'><status>\(round)</status></presence>"
            }
            try await feeder.send(Self.header + (0 ..< people).map { change($0, round: 0) }.joined())
            #expect(
                try await eventually(timeout: TestDeadline.serverCycle) {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).updatesApplied == people
                })
            // Rounds of changes to a tenth of everyone each, fed while the stream opens and its snapshot is
            // written: round r sets status "r".
            let rounds = 20
            let changer = Task {
                for round in 1 ... rounds {
                    let changed = stride(from: round % 10, to: people, by: 10)
                    try await feeder.send(changed.map { change($0, round: round) }.joined())
                }
            }
            let stream = try await EventClient.open("?snapshot=chunks", port: ports.http)
            defer { stream.close() }
            var shown: [String: Int] = [:]
            var fromSnapshot = Set<String>()
            var snapshotEvents = 0
            var older = 0
            var repeatedAcrossTheSeam = 0
            func show(_ result: PresenceQueryResult, inSnapshot: Bool) {
                let round = Int(result.status ?? "") ?? -1
                if let before = shown[result.jid] {
                    if round < before { older += 1 }
                    if round == before && fromSnapshot.contains(result.jid) { repeatedAcrossTheSeam += 1 }
                }
                shown[result.jid] = round
                if inSnapshot { fromSnapshot.insert(result.jid) } else { fromSnapshot.remove(result.jid) }
            }
            while true {
                let event = try await stream.nextAnswers()
                #expect(event.name == "snapshot", "the snapshot comes whole before any change")
                snapshotEvents += 1
                for result in event.results {
                    #expect(shown[result.jid] == nil, "nobody twice in one snapshot")
                    show(result, inSnapshot: true)
                }
                if event.id?.contains(":") == false { break }
            }
            #expect(snapshotEvents < people / 100, "chunks of many answers: \(snapshotEvents) events")
            let inSnapshot = shown.count
            func last(_ person: Int) -> Int {
                stride(from: rounds, through: 1, by: -1).first { $0 % 10 == person % 10 }!
            }
            // The stream is read while the rounds are still being fed: a reader that waited for the feed to end
            // first would leave the connection silent, its buffers full, for as long as the service takes.
            var behind = Set((0 ..< people).filter { shown["p\($0)@example.com"] != last($0) })
            while !behind.isEmpty {
                let event = try await stream.nextAnswers()
                #expect(event.name == "presence")
                for result in event.results {
                    show(result, inSnapshot: false)
                    if let person = Int(result.jid.dropFirst().prefix { $0 != "@" }), shown[result.jid] == last(person)
                    {
                        behind.remove(person)
                    }
                }
            }
            try await changer.value
            #expect(inSnapshot + shown.count > people && shown.count == people, "nobody missed")
            #expect(older == 0, "never an older status after a newer one")
            // An answer read in the instant between the storage applying a change and the change being marked
            // may come again as that change; leaving out everyone who changed during the snapshot keeps that rare.
            #expect(repeatedAcrossTheSeam < people / 100, "\(repeatedAcrossTheSeam) answers repeated across the seam")
        }
    }

    @Test func aSnapshotAsATableHoldsTheAnswersOfOneInChunksInHalfTheBytes() async throws {
        try await withService { ports in
            let people = 1_200
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send(
                Self.header
                    + (0 ..< people).map { person in
                        "<presence from='p\(person)@example.com/desk'><show>\(person % 2 == 0 ? "away" : "dnd")</show>"
                            + "<status>Item \(person) &amp; \"more\"</status><priority>\(person % 5)</priority></presence>"
                    }.joined()
                    + "<presence from='gone@example.com/desk' type='unavailable'><status>Left</status></presence>")
            #expect(
                try await eventually(timeout: TestDeadline.serverCycle) {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).updatesApplied == people + 1
                })
            func snapshot(_ form: String) async throws -> (answers: [PresenceQueryResult], events: Int, bytes: Int) {
                let stream = try await EventClient.open("?snapshot=\(form)", port: ports.http)
                defer { stream.close() }
                var answers: [PresenceQueryResult] = []
                var (events, bytes) = (0, 0)
                while true {
                    guard let event = try await stream.next() else { throw TestFailure("the stream ended") }
                    guard event.name == "snapshot" else { continue }
                    events += 1
                    bytes += event.data.utf8.count
                    let data = Data(event.data.utf8)
                    answers +=
                        form == "table"
                        ? try EventClient.tableResults(data)
                        : try JSONDecoder().decode(QueryDocument.self, from: data).results
                    if event.id?.contains(":") == false { break }
                }
                return (answers, events, bytes)
            }
            let chunks = try await snapshot("chunks")
            let table = try await snapshot("table")
            #expect(table.answers.count == people + 1 && table.events == chunks.events, "\(table.events) events")
            #expect(
                Set(table.answers) == Set(chunks.answers), "every answer the same, member for member, in either form")
            #expect(table.answers.contains { $0.state == .offline && $0.status == "Left" })
            #expect(table.bytes * 10 < chunks.bytes * 6, "\(table.bytes) bytes as a table, \(chunks.bytes) in chunks")
        }
    }

    @Test func aStalledReaderResumesToTheLatestAnswerPerJIDNotAQueueOfEveryChange() async throws {
        // The subject is coalescing, not the stall limit: the reader must outlast however long 20,000 changes take to
        // apply on a loaded machine (over the default 30 s under ThreadSanitizer with the suite running beside it).
        try await withService(configure: { $0.events.writeTimeout = .seconds(600) }) { ports in
            let stream = try await RawEventStream.open("?jid=alice@example.com", port: ports.http)
            defer { stream.close() }
            _ = try await stream.nextAnswer()
            // The reader does not read while 20,000 changes of about 1 KB each are applied: far more than the
            // socket buffers hold, so the service must coalesce instead of queueing.
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            let padding = String(repeating: "x", count: 1000)
            let changes = 20_000
            var text = Self.header
            for index in 1 ... changes {
                text += "<presence from='alice@example.com/desk'><status>\(index) \(padding)</status></presence>"
            }
            try await feeder.send(text)
            #expect(
                try await eventually(timeout: TestDeadline.serverCycle) {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).updatesApplied == changes
                })
            var seen: [Int] = []
            while seen.last != changes {
                let answer = try await stream.nextAnswer()
                let number = Int(answer.status?.split(separator: " ").first ?? "") ?? -1
                seen.append(number)
            }
            #expect(seen.count < changes / 2, "coalesced: \(seen.count) events for \(changes) changes")
            #expect(seen == seen.sorted(), "never an older status after a newer one")
        }
    }

    @Test func aReconnectWithLastEventIDResumesWithoutAGapAndAnUnknownIDGetsASnapshot() async throws {
        try await withService { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send(Self.header)
            let first = try await EventClient.open("?jid=alice@example.com&jid=bob@example.com", port: ports.http)
            _ = try await first.nextAnswer()
            let last = try #require(try await first.nextAnswer().id)
            first.close()

            try await feeder.send(
                "<presence from='bob@example.com/desk'><status>While you were away</status></presence>")
            #expect(
                try await eventually { try await state(of: "bob@example.com", port: ports.http)?.state == .available })
            let resumed = try await EventClient.open(
                "?jid=alice@example.com&jid=bob@example.com", port: ports.http, lastEventID: last)
            defer { resumed.close() }
            let missed = try await resumed.nextAnswer()
            #expect(missed.result.jid == "bob@example.com" && missed.result.status == "While you were away")
            #expect(!(missed.id ?? "").contains(":"), "a resume, not a snapshot")

            let stale = try await EventClient.open("?jid=alice@example.com", port: ports.http, lastEventID: "0")
            defer { stale.close() }
            let snapshot = try await stale.nextAnswer()
            #expect(snapshot.result.jid == "alice@example.com" && snapshot.result.state == .unknown)
        }
    }

    @Test func aStreamNamingPeopleTwiceAndOutOfOrderListsEachOnceInOrderAndResumesOnlyItsOwn() async throws {
        try await withService { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send(Self.header)
            // Every other person of twenty, named twice and in reverse order.
            let watched = stride(from: 0, to: 20, by: 2).map { "p\($0)@example.com" }
            let query = "?" + (watched.reversed() + watched).map { "jid=" + $0 }.joined(separator: "&")
            let first = try await EventClient.open(query, port: ports.http)
            var snapshot: [String] = []
            var last: String?
            for _ in watched {
                let answer = try await first.nextAnswer()
                snapshot.append(answer.result.jid)
                last = answer.id
            }
            first.close()
            #expect(snapshot == watched.sorted(), "each once, in JID order")

            // Everyone changes while the screen is away: it resumes with its own ten, and no one else.
            try await feeder.send(
                (0 ..< 20).map { "<presence from='p\($0)@example.com/desk'><status>Back</status></presence>" }
                    .joined())
            #expect(
                try await eventually {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).updatesApplied == 20
                })
            let resumed = try await EventClient.open(query, port: ports.http, lastEventID: last)
            defer { resumed.close() }
            var missed: [String] = []
            for _ in watched { missed.append(try await resumed.nextAnswer().result.jid) }
            #expect(missed.sorted() == watched.sorted(), "the changes of its own people, each once")
            try await feeder.send("<presence from='p0@example.com/desk'><status>Last</status></presence>")
            let next = try await resumed.nextAnswer()
            #expect(next.result.jid == "p0@example.com" && next.result.status == "Last", "nothing else was pending")
        }
    }

    @Test func aPersonOnFortyScreensReachesEachOpenOneOnceAndNoneThatClosed() async throws {
        try await withService { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send(
                Self.header + "<presence from='alice@example.com/desk'><status>Here</status></presence>")
            #expect(
                try await eventually { try await state(of: "alice@example.com", port: ports.http)?.status == "Here" })
            // More screens on alice than a short list holds, ten of them on bob too, opened and closed in an
            // interleaved order.
            var screens: [EventClient] = []
            for index in 0 ..< 40 {
                let bob = index < 10 ? "&jid=bob@example.com" : ""
                let stream = try await EventClient.open(
                    "?jid=alice@example.com&jid=p\(index)@example.com\(bob)", port: ports.http)
                for _ in 0 ..< (index < 10 ? 3 : 2) { _ = try await stream.nextAnswer() }
                screens.append(stream)
            }
            let (closing, open) = (screens.indices.filter { $0 % 3 == 0 }, screens.indices.filter { $0 % 3 != 0 })
            for index in closing { screens[index].close() }
            #expect(
                try await eventually {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).eventStreams == open.count
                })
            try await feeder.send(
                "<presence from='alice@example.com/desk'><status>Moved</status></presence>"
                    + "<presence from='bob@example.com/desk'><status>Also</status></presence>")
            for index in open {
                let change = try await screens[index].nextAnswer()
                #expect(change.result.jid == "alice@example.com" && change.result.status == "Moved", "screen \(index)")
                if index < 10 {
                    let bob = try await screens[index].nextAnswer()
                    #expect(bob.result.jid == "bob@example.com" && bob.result.status == "Also", "screen \(index)")
                }
            }
            // Each open screen got it once: the next event on each is the next change, not alice's again.
            try await feeder.send(
                open.map { "<presence from='p\($0)@example.com/desk'><status>Own</status></presence>" }.joined())
            for index in open {
                let next = try await screens[index].nextAnswer()
                #expect(next.result.jid == "p\(index)@example.com", "screen \(index) saw alice's change once")
            }
            for index in open { screens[index].close() }
            #expect(
                try await eventually {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).eventStreams == 0
                })
        }
    }

    @Test func anEventIDFromAnotherReplicaGetsASnapshotNeverAResumeFromItsNumber() async throws {
        try await withService { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send(
                Self.header + "<presence from='alice@example.com/desk'><status>One</status></presence>")
            #expect(
                try await eventually { try await state(of: "alice@example.com", port: ports.http)?.state == .available }
            )
            let watching = "?jid=alice@example.com&jid=bob@example.com"
            let first = try await EventClient.open(watching, port: ports.http)
            _ = try await first.nextAnswer()
            let own = try #require(try await first.nextAnswer().id)
            first.close()
            let number = try #require(changeNumber(own))
            let instance = String(own[..<own.lastIndex(of: "-")!])
            #expect(instance.count == 16, "the instance is 64 random bits in hexadecimal: \(own)")

            // Bob changes after `own`: a resume sends bob first, a snapshot alice first (in JID order).
            try await feeder.send("<presence from='bob@example.com/desk'><status>Later</status></presence>")
            #expect(
                try await eventually { try await state(of: "bob@example.com", port: ports.http)?.status == "Later" })
            let resumed = try await EventClient.open(watching, port: ports.http, lastEventID: own)
            defer { resumed.close() }
            #expect(try await resumed.nextAnswer().result.jid == "bob@example.com", "this replica's own id resumes")

            let other = instance == "0000000000000001" ? "0000000000000002" : "0000000000000001"
            for foreign in ["\(other)-\(number)", "\(number)", "\(instance)-\(number):1", "nonsense"] {
                let stream = try await EventClient.open(watching, port: ports.http, lastEventID: foreign)
                defer { stream.close() }
                let event = try await stream.nextAnswer()
                #expect(event.result.jid == "alice@example.com", "Last-Event-ID \(foreign) gets a snapshot")
                #expect(event.id?.hasPrefix(instance + "-") == true && event.id?.hasSuffix(":1") == true)
            }
        }
    }

    @Test func eachStreamIsToldItsOwnRetryBetweenOnceAndTwiceTheConfiguredWait() async throws {
        try await withService { ports in
            var waits: [Int] = []
            for _ in 0 ..< 12 {
                let stream = try await TestEventStream(port: ports.http, path: "/v1/presence/events?jid=a@example.com")
                defer { stream.close() }
                let first = try #require(try await stream.next())
                #expect(first.name == "presence")
                let retry = try #require(stream.retry, "the stream says its retry before its first event")
                waits.append(Int(retry / .milliseconds(1)))
            }
            #expect(waits.allSatisfy { (1000 ... 2000).contains($0) }, "\(waits)")
            #expect(Set(waits).count > 1, "the waits are drawn for each stream: \(waits)")
        }
    }

    @Test func aSnapshotOfNobodyInChunksOrATableIsOneEmptyEventThatSaysWhereItEnds() async throws {
        // A replica that holds nobody (restarted without its disk tier) must say its snapshot is over, so that a
        // client holding statuses from before can ask again for them rather than keep them.
        for form in ["table", "chunks"] {
            try await withService { ports in
                let stream = try await EventClient.open("?snapshot=\(form)", port: ports.http)
                defer { stream.close() }
                let (name, id, results) = try await stream.nextAnswers()
                #expect(name == "snapshot" && results.isEmpty, "\(form): one empty snapshot event")
                let snapshotID = try #require(id)
                #expect(!snapshotID.contains(":"), "\(form): its id is the snapshot's last one: \(snapshotID)")
                let feeder = try await Feeder.connect(port: ports.feed)
                defer { feeder.close() }
                try await feeder.send("<presence from='\(form)@example.com/desk'/>")
                let change = try await stream.nextAnswers()
                #expect(change.name == "presence" && change.results.map(\.jid) == ["\(form)@example.com"])
            }
        }
    }
}

/// The change number of an event id (`INSTANCE-N`, or `INSTANCE-N:k` in a snapshot).
func changeNumber(_ id: String?) -> UInt64? {
    guard let id, let dash = id.lastIndex(of: "-") else { return nil }
    return UInt64(id[id.index(after: dash)...].prefix { $0 != ":" })
}
