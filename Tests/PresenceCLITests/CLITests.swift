import Foundation
import PresenceTestSupport
import Testing

@Suite("The presence command, end to end", .serialized)
struct CLITests {
    @Test func replayReportsTheJSONContract() throws {
        let result = try CLI.run(["replay", CLI.sample("multi-device.xml"), "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(result.json)
        for key in [
            "storage", "stanzas", "presenceUpdates", "ignored", "rejected", "users", "retained", "lost", "stale",
            "lossRate", "evictions", "lostUsers", "error", "stanzasPerSecond", "peakResidentBytes",
        ] {
            #expect(json[key] != nil, "missing \(key)")
        }
        #expect(json["storage"] as? String == "dictionary")
        #expect(json["stanzas"] as? Int == 14)
        #expect(json["presenceUpdates"] as? Int == 10)
        #expect((json["ignored"] as? [String: Any])?["total"] as? Int == 2)
        #expect((json["rejected"] as? [String: Any])?["total"] as? Int == 2)
        #expect(json["users"] as? Int == 4)
        #expect(json["lost"] as? Int == 0)
        #expect(json["error"] is NSNull)
    }

    @Test func theDictionaryIgnoresLimitsAndSaysSo() throws {
        let result = try CLI.run(["replay", CLI.sample("attendance.xml"), "--count-limit", "2", "--format", "json"])
        #expect(result.status == 0)
        let json = try #require(result.json)
        #expect(json["lost"] as? Int == 0)
        #expect(json["notApplicable"] as? [String] == ["count-limit"])
        let text = try CLI.run(["replay", CLI.sample("attendance.xml"), "--count-limit", "2"])
        #expect(text.stdout.contains("not applicable to dictionary: --count-limit"))
    }

    @Test func anEvictingStorageReportsItsLostUsers() throws {
        let result = try CLI.run([
            "replay", CLI.sample("attendance.xml"), "--storage", "lru", "--count-limit", "2", "--format", "json",
        ])
        #expect(result.status == 0)
        let json = try #require(result.json)
        #expect(json["users"] as? Int == 5)
        #expect(json["lost"] as? Int == 3)
        #expect((json["lostUsers"] as? [String])?.count == 3)
        #expect(((json["evictions"] as? [String: Int])?["count-limit"] ?? 0) >= 3)
        // Reading all five in JID order refills heidi, ivan and judy; each refill evicts the least recently used,
        // so kemal, held at the audit, is gone when read: 4 probes for 3 losses.
        #expect(json["refillProbes"] as? Int == 4)
        let dictionary = try #require(try CLI.run(["replay", CLI.sample("attendance.xml"), "--format", "json"]).json)
        #expect(dictionary["refillProbes"] as? Int == 0)
    }

    @Test func compareRunsEveryStorageAndEndsWithAVerdict() throws {
        let result = try CLI.run(["compare", CLI.sample("attendance.xml"), "--pressure-every", "3", "--format", "json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(result.json)
        let storages = try #require(json["storages"] as? [[String: Any]])
        #expect(storages.map { $0["storage"] as? String } == ["dictionary", "nscache", "lru"])
        #expect(storages[0]["lost"] as? Int == 0)
        #expect((storages[1]["lost"] as? Int ?? 0) > 0)
        let text = try CLI.run(["compare", CLI.sample("attendance.xml"), "--pressure-every", "3"])
        #expect(text.stdout.split(separator: "\n").last?.hasPrefix("verdict: ") == true)
    }

    @Test func compareWithDiskReadsWhatTheCacheDroppedBackFromDiskAndLosesNoOne() throws {
        let result = try CLI.run([
            "compare", CLI.sample("office-morning.xml"), "--count-limit", "50", "--with-disk", "--format", "json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(result.json)
        let storages = try #require(json["storages"] as? [[String: Any]])
        #expect(
            storages.map { $0["storage"] as? String }
                == ["dictionary", "nscache", "lru", "nscache+disk", "lru+disk", "disk"])
        let byName = Dictionary(uniqueKeysWithValues: storages.map { ($0["storage"] as? String ?? "", $0) })
        #expect((byName["lru"]?["lost"] as? Int ?? 0) > 100, "the cache alone loses most users at 50 entries")
        for name in ["nscache+disk", "lru+disk", "disk"] {
            let report = try #require(byName[name])
            #expect(report["lost"] as? Int == 0 && report["stale"] as? Int == 0, "\(name): \(report)")
            #expect(report["retained"] as? Int == byName["dictionary"]?["users"] as? Int, "audited against the truth")
            let disk = try #require(report["disk"] as? [String: Any])
            #expect((disk["diskReads"] as? Int ?? 0) > 0, "\(name) read users back from disk")
            #expect((disk["bytesWritten"] as? Int ?? 0) > 0)
        }
        #expect(byName["lru"]?["disk"] is NSNull)
        let verdict = try #require(json["verdict"] as? String)
        #expect(verdict.contains("nothing lost"), "\(verdict)")
    }

    @Test func queryAnswersAvailableOfflineUnknownAndLost() throws {
        let result = try CLI.run([
            "query", "--input", CLI.sample("attendance.xml"), "--storage", "lru", "--count-limit", "4", "--format",
            "json",
            "grace.park@people.example.com", "judy.silva@marketing.example.com", "nobody@example.com",
            "heidi.weber@engineering.example.com", "ivan.costa@sales.example.com",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let results = try #require(result.json?["results"] as? [[String: Any]])
        #expect(results.map { $0["state"] as? String } == ["offline", "offline", "unknown", "lost", "available"])
        #expect(results[1]["attendance"] as? String == "vacation")
        #expect(results[1]["status"] as? String == "Back on 2 December")
        #expect(results[2]["show"] is NSNull)
        #expect(results[4]["show"] as? String == "away")
        #expect(results[4]["attendance"] as? String == "business-trip")
        #expect(result.json?["error"] is NSNull)
        for key in ["jid", "state", "show", "status", "priority", "resource", "attendance", "since"] {
            #expect(results.allSatisfy { $0[key] != nil }, "\(key)")
        }
    }

    @Test func aMalformedStreamExits65AndKeepsItsPrefix() throws {
        let result = try CLI.run(["replay", CLI.sample("malformed.xml"), "--format", "json"])
        #expect(result.status == 65)
        let json = try #require(result.json)
        #expect(json["presenceUpdates"] as? Int == 2)
        #expect(json["users"] as? Int == 2)
        let error = try #require(json["error"] as? [String: Any])
        #expect(error["condition"] as? String == "not-well-formed")
        #expect(error["line"] as? Int == 5)
        #expect(error["column"] != nil && error["byteOffset"] != nil && error["message"] != nil)
    }

    @Test func aStanzaOverTheLimitExits65() throws {
        let result = try CLI.run([
            "replay", CLI.sample("multi-device.xml"), "--max-stanza-bytes", "100", "--format", "json",
        ])
        #expect(result.status == 65)
        #expect((result.json?["error"] as? [String: Any])?["condition"] as? String == "policy-violation")
    }

    @Test func usageErrorsExit64() throws {
        #expect(try CLI.run(["replay"]).status == 64)
        #expect(try CLI.run(["replay", CLI.sample("attendance.xml"), "--storage", "redis"]).status == 64)
        #expect(try CLI.run(["query", "--input", CLI.sample("attendance.xml"), "not a jid@"]).status == 64)
        #expect(try CLI.run(["generate", "--users", "0", "--updates", "1"]).status == 64)
        let probing = try CLI.run(["query", "--input", CLI.sample("attendance.xml"), "--policy", "probe", "a@b.c"])
        #expect(probing.status == 64)
        #expect(probing.stderr.contains("needs --server"))
    }

    @Test func anInputThatCannotBeOpenedExits66() throws {
        let result = try CLI.run(["replay", "/nonexistent/stream.xml"])
        #expect(result.status == 66)
        #expect(result.stderr.contains("cannot open /nonexistent/stream.xml"))
        #expect(try CLI.run(["compare", "/nonexistent/stream.xml"]).status == 66)
    }

    @Test func generateIsDeterministic() throws {
        let first = try CLI.run(["generate", "--users", "50", "--updates", "300", "--seed", "4"])
        let second = try CLI.run(["generate", "--users", "50", "--updates", "300", "--seed", "4"])
        let other = try CLI.run(["generate", "--users", "50", "--updates", "300", "--seed", "5"])
        #expect(first.status == 0)
        #expect(first.stdout == second.stdout)
        #expect(first.stdout != other.stdout)
        #expect(first.stdout.hasPrefix("<?xml"))
    }

    @Test func standardInputFedSlowlyIsAppliedAsItArrives() throws {
        // The pipe stays open: the command can only answer if it applied each stanza as its bytes arrived and
        // stopped at the malformed one, not if it waited for the end of its input.
        let chunks = [
            "<presence from='a@example.com/desk'><show>dnd</show></presence>\n",
            "<presence from='b@example.com/desk'/>\n<presence from='a@example.com/desk' type='unavai",
            "lable'/>\n",
            "<presence from='c@example.com/desk'></wrong>",
        ]
        let result = try CLI.run(
            ["query", "--input", "-", "--format", "json", "a@example.com", "b@example.com", "c@example.com"],
            stdinChunks: chunks.map { Data($0.utf8) }, delay: 0.1, closeInput: false, timeout: TestDeadline.processExit)
        #expect(!result.timedOut, "the command waited for the end of standard input")
        #expect(result.status == 65, "\(result.stderr)")
        let results = try #require(result.json?["results"] as? [[String: Any]])
        #expect(results.map { $0["state"] as? String } == ["offline", "available", "unknown"])
        #expect((result.json?["error"] as? [String: Any])?["condition"] as? String == "not-well-formed")
    }

    @Test func compareReadsStandardInputOnceForEveryStorage() throws {
        let stream = try String(contentsOfFile: CLI.sample("attendance.xml"), encoding: .utf8)
        let result = try CLI.run(["compare", "-", "--format", "json"], stdinChunks: [Data(stream.utf8)])
        #expect(result.status == 0)
        let storages = try #require(result.json?["storages"] as? [[String: Any]])
        #expect(storages.allSatisfy { $0["users"] as? Int == 5 })
    }

    @Test func textOutputUsesThousandsSeparatorsAndNoProgressWhenNotATerminal() throws {
        let generated = try CLI.run(["generate", "--users", "2000", "--updates", "3000"])
        let path = NSTemporaryDirectory() + "/presence-cli-test-\(getpid()).xml"
        try generated.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        defer { unlink(path) }
        let result = try CLI.run(["replay", path])
        #expect(result.status == 0)
        let line = result.stdout.split(separator: "\n").first { $0.hasPrefix("presence updates") }
        #expect(line?.hasSuffix(" 3,000") == true, "\(result.stdout)")
        #expect(result.stderr.isEmpty, "progress goes to stderr only on a terminal")
    }
}
