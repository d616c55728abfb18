import Foundation
import PresenceIngest
import PresenceService
import PresenceStore
import PresenceTestSupport
import PresenceWire
import PresenceWorkload
import Testing

@Suite("The service: TCP feeders in, HTTP queries out", .serialized)
struct ServiceTests {
    @Test func aStanzaFedAloneOnAnOpenConnectionIsQueryable() async throws {
        try await withService { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send(
                "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>")
            try await feeder.send(
                "<presence from='alice@example.com/desk'><show>dnd</show><status>Focus</status></presence>")
            #expect(
                try await eventually { try await state(of: "alice@example.com", port: ports.http)?.state == .available }
            )
            let result = try #require(try await state(of: "alice@example.com", port: ports.http))
            #expect(result.show == .dnd)
            #expect(result.status == "Focus")
            #expect(result.resource == "desk")
            #expect(try await state(of: "nobody@example.com", port: ports.http)?.state == .unknown)
        }
    }

    @Test func severalJIDsAreAnsweredInOneRequestInTheCLIsShape() async throws {
        try await withService { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send(
                "<presence from='a@example.com/desk'/><presence from='b@example.com/desk' type='unavailable'/>")
            #expect(try await eventually { try await state(of: "b@example.com", port: ports.http)?.state == .offline })
            let response = try await httpGet(
                "/v1/presence?jid=a@example.com&jid=B@Example.com&jid=c@example.com", port: ports.http)
            #expect(response.status == 200)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            #expect(json["error"] is NSNull)
            let results = try #require(json["results"] as? [[String: Any]])
            #expect(results.map { $0["state"] as? String } == ["available", "offline", "unknown"])
            #expect(results.map { $0["jid"] as? String } == ["a@example.com", "b@example.com", "c@example.com"])
            for key in ["jid", "state", "show", "status", "priority", "resource", "attendance", "since"] {
                #expect(results.allSatisfy { $0[key] != nil }, "\(key)")
            }
            let invalid = try await httpGet("/v1/presence/@nobody", port: ports.http)
            #expect(invalid.status == 400)
            #expect(try await httpGet("/v1/presence", port: ports.http).status == 400)
        }
    }

    @Test func concurrentFeedersWhileQueryingEndExactlyAtTheTruth() async throws {
        let feeders = 8
        let updatesPerFeeder = 5_000
        // Each feeder speaks for its own people (a suffix on every JID), so the truth does not depend on how
        // the feeders interleave.
        let streams: [[UInt8]] = (0 ..< feeders).map { index in
            var generator = PresenceStreamGenerator(
                .init(users: 300, updates: updatesPerFeeder, seed: UInt64(index + 1)))
            let text = String(decoding: generator.generate(), as: UTF8.self)
            return Array(text.replacingOccurrences(of: "@", with: "-f\(index)@").utf8)
        }
        var truth: [BareJID: UserPresence] = [:]
        for stream in streams {
            var feed = PresenceFeed()
            var tick: Int64 = 0
            try feed.feed(stream) { update in
                tick += 1
                truth[update.from.bare, default: UserPresence()].apply(
                    update, receivedAt: PresenceTime(millisecondsSinceEpoch: tick))
            }
        }
        let storage = DictionaryMemoryStorage()
        let expected = truth
        try await withService(storage: storage) { ports in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for stream in streams {
                    group.addTask {
                        let feeder = try await Feeder.connect(port: ports.feed)
                        defer { feeder.close() }
                        var offset = 0
                        while offset < stream.count {  // in uneven chunks, as a network delivers them
                            let end = min(offset + 1000 + offset % 3001, stream.count)
                            try await feeder.send(Array(stream[offset ..< end]))
                            offset = end
                        }
                    }
                }
                group.addTask {  // queries while the feeders run
                    let keys = Array(expected.keys.prefix(50))
                    for round in 0 ..< 40 {
                        _ = try await state(of: keys[round % keys.count].rawValue, port: ports.http)
                    }
                }
                try await group.waitForAll()
            }
            let total = updatesPerFeeder * feeders
            #expect(
                try await eventually(timeout: TestDeadline.serverCycle) {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).updatesApplied == total
                })
        }
        #expect(storage.count == expected.count)
        for (key, value) in expected {
            let held = try #require(storage.get(key), "\(key) missing")
            // Times differ (the service stamps arrival), everything a UI shows must not.
            #expect(shown(held) == shown(value), "\(key)")
        }
    }

    @Test func aMalformedFeederGetsAStreamErrorAndOthersAreUntouched() async throws {
        try await withService { ports in
            let good = try await Feeder.connect(port: ports.feed)
            defer { good.close() }
            try await good.send("<presence from='good@example.com/desk'/>")
            let bad = try await Feeder.connect(port: ports.feed)
            defer { bad.close() }
            try await bad.send(
                "<presence from='bad@example.com/desk'/><presence from='bad2@example.com/desk'><show>away</sho></presence>"
            )
            let answer = try await bad.readUntilClosed().text
            #expect(answer.contains("<stream:error><not-well-formed xmlns='urn:ietf:params:xml:ns:xmpp-streams'/>"))
            #expect(answer.hasSuffix("</stream:stream>"))
            try await good.send("<presence from='good@example.com/phone'/>")
            #expect(
                try await eventually {
                    try await get(QueryDocument.self, "/v1/presence?jid=good@example.com", port: ports.http).results[0]
                        .state == .available
                })
            #expect(
                try await state(of: "bad@example.com", port: ports.http)?.state == .available,
                "applied before the error")
            #expect(try await state(of: "bad2@example.com", port: ports.http)?.state == .unknown)
            #expect(
                try await eventually {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).streamErrors == 1
                })
        }
    }

    @Test(arguments: [
        ("<presence from='a@example.com/x'/><!-- comment -->", "restricted-xml"),
        (
            "<presence from='a@example.com/x'><status>" + String(repeating: "x", count: 300) + "</status></presence>",
            "policy-violation"
        ),
    ])
    func restrictedXMLAndOversizedStanzasAreStreamErrors(input: String, condition: String) async throws {
        try await withService(configure: { $0.stream = .init(limits: .init(maxStanzaBytes: 200)) }) { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send(input)
            #expect(
                try await feeder.readUntilClosed().text.contains(
                    "<\(condition) xmlns='urn:ietf:params:xml:ns:xmpp-streams'/>"))
        }
    }

    @Test func aFeederCutMidStanzaKeepsWhatCameBefore() async throws {
        try await withService { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            try await feeder.send("<presence from='kept@example.com/desk'/><presence from='cut@example.com/desk'><sta")
            feeder.close()
            #expect(
                try await eventually {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).streamErrors == 1
                })
            #expect(try await state(of: "kept@example.com", port: ports.http)?.state == .available)
            #expect(try await state(of: "cut@example.com", port: ports.http)?.state == .unknown)
            #expect(try await get(ServiceStats.self, "/v1/stats", port: ports.http).feedersConnected == 0)
        }
    }

    @Test func connectionsOverTheLimitAreRefusedAndSilentFeedersClosed() async throws {
        try await withService(configure: {
            $0.maxConnections = 1
            // Long enough that the first feeder is still connected when the test has read the statistics, on a
            // machine running ThreadSanitizer; short enough for the 10 s the close is waited for.
            $0.idleTimeout = .seconds(3)
        }) { ports in
            let first = try await Feeder.connect(port: ports.feed)
            defer { first.close() }
            try await first.send("<presence from='a@example.com/desk'/>")
            #expect(
                try await eventually {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).feedersConnected == 1
                })
            let second = try await Feeder.connect(port: ports.feed)
            defer { second.close() }
            #expect(try await second.readUntilClosed().text.contains("<policy-violation"))
            let silent = try await first.readUntilClosed()
            #expect(silent.closedByService, "the 3 s idle timeout closes a silent feeder (the test waits 10 s at most)")
        }
    }

    @Test func statsMetricsAndHealthAnswer() async throws {
        try await withService(storage: LRUMemoryStorage(countLimit: 1)) { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send("<presence from='a@example.com/desk'/><presence from='b@example.com/desk'/>")
            #expect(
                try await eventually {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).updatesApplied == 2
                })
            let stats = try await get(ServiceStats.self, "/v1/stats", port: ports.http)
            #expect(stats.storage == "lru")
            #expect(stats.entries == 1)
            #expect(stats.lost == 1)
            #expect(stats.evictions["count-limit"] == 1)
            #expect(stats.feedersConnected == 1)
            #expect(stats.residentBytes != nil)
            #expect(try await state(of: "a@example.com", port: ports.http)?.state == .lost)
            let metrics = try await httpGet("/metrics", port: ports.http)
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(metrics.status == 200)
            #expect(text.contains("presence_updates_applied_total 2"))
            #expect(text.contains("presence_storage_entries 1"))
            #expect(text.contains("presence_storage_removals{cause=\"count-limit\"} 1"))
            let health = try await httpGet("/healthz", port: ports.http)
            #expect(health.status == 200)
        }
    }

    @Test func everyRequestIsTimedByItsRouteWhicheverPathAnswersIt() async throws {
        try await withService(storage: DictionaryMemoryStorage()) { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send("<presence from='a@example.com/desk'/>")
            #expect(try await eventually { try await state(of: "a@example.com", port: ports.http)?.state == .available })
            // The storage's fast path answers these two; the router the rest.
            _ = try await httpGet("/v1/presence/a@example.com", port: ports.http)
            _ = try await httpGet("/v1/presence?jid=a@example.com&jid=b@example.com", port: ports.http)
            _ = try await httpGet("/v1/presence/a@example.com/badge.svg", port: ports.http)
            _ = try await httpGet("/v1/stats", port: ports.http)
            _ = try await httpGet("/no/such/path", port: ports.http)
            let text = String(decoding: try await httpGet("/metrics", port: ports.http).body, as: UTF8.self)
            func count(_ route: String) -> Int? {
                let prefix = "presence_http_request_duration_seconds_count{route=\"\(route)\"} "
                return text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
            }
            // The `state(of:)` polls above are single-JID queries too.
            #expect(count("presence") ?? 0 >= 2)
            #expect(count("presence-batch") == 1)
            #expect(count("badge") == 1)
            #expect(count("stats") == 1)
            #expect(count("other") == 1)
            #expect(count("metrics") == 0, "the scrape is timed once its answer is written: \(text)")
            #expect(count("events") == 0)
            // Dashboards name these series: every route has one from the start.
            for route in ["presence", "presence-batch", "events", "badge", "stats", "metrics", "health", "people", "openapi", "other"] {
                #expect(count(route) != nil, "\(route)")
            }
        }
    }

    @Test func withoutAnXMPPSourceAnswersComeFromTheStorageAndProbingPoliciesAreRefused() async throws {
        try await withService(storage: LRUMemoryStorage(countLimit: 1)) { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            defer { feeder.close() }
            try await feeder.send("<presence from='a@example.com/desk'/><presence from='b@example.com/desk'/>")
            #expect(try await eventually { try await state(of: "a@example.com", port: ports.http)?.state == .lost })
            let lost = try #require(try await state(of: "a@example.com", port: ports.http))
            #expect(lost.origin == AnswerOrigin.none && lost.probeFailure == nil, "cache-only: lost stays lost")
            #expect(try await state(of: "b@example.com", port: ports.http)?.origin == .storage)
            let cacheOnly = try await httpGet("/v1/presence/a@example.com?policy=cache-only", port: ports.http)
            #expect(cacheOnly.status == 200)
            for policy in ["probe", "cache-else-probe"] {
                let refused = try await httpGet("/v1/presence?jid=a@example.com&policy=\(policy)", port: ports.http)
                #expect(refused.status == 409, "well formed, but nothing to probe here")
                #expect(String(decoding: refused.body, as: UTF8.self).contains("needs an XMPP source"))
            }
            #expect(try await get(ServiceStats.self, "/v1/stats", port: ports.http).probes == nil)
        }
    }

    @Test func gracefulShutdownFinishesTheStanzasInHand() async throws {
        let storage = DictionaryMemoryStorage()
        let total = 20_000
        try await withService(storage: storage) { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            #expect(
                try await eventually(timeout: TestDeadline.serverCycle) {
                    try await get(ServiceStats.self, "/v1/stats", port: ports.http).connectionsAccepted == 1
                })
            var stream = ""
            for index in 0 ..< total { stream += "<presence from='user\(index)@example.com/desk'/>" }
            try await feeder.send(stream)
            feeder.close()
            // Shutdown is triggered right away, while the service is still applying those bytes.
        }
        // The service stopped accepting, finished the stream in hand, and returned without error.
        #expect(storage.count == total)
    }
}

/// What a UI shows for a user, without times.
private func shown(_ value: UserPresence) -> [String] {
    var lines = value.availableResources.map { "\($0.resource) \($0.details)" }.sorted()
    if let status = value.status {
        lines.append("status \(status.isAvailable) \(status.presence.resource) \(status.presence.details)")
    }
    return lines
}
