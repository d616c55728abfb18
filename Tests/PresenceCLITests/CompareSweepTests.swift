import Foundation
import Testing
import XMPPStream

/// `presence compare --sweep`: the evicting storages across a range of one limit, as a table, a document and a
/// chart.
@Suite("presence compare --sweep")
struct CompareSweepTests {
    private func sweep(_ arguments: [String]) throws -> [String: Any] {
        let result = try CLI.run(["compare", CLI.sample("office-morning.xml"), "--format", "json"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    private func series(_ report: [String: Any], _ storage: String) throws -> [[String: Any]] {
        let all = try #require(report["series"] as? [[String: Any]])
        return try #require(all.first { $0["storage"] as? String == storage }?["points"] as? [[String: Any]])
    }

    @Test func moreRoomNeverLosesMoreUsersInTheLRUAndTheDictionaryLosesNone() throws {
        let report = try sweep(["--sweep", "count-limit=5..250", "--steps", "10"])
        let values = try #require(report["values"] as? [Int])
        #expect(values.count == 10 && values.first == 5 && values.last == 250)
        #expect(values == values.sorted() && Set(values).count == values.count, "log-spaced, increasing")
        #expect(report["dictionaryLost"] as? Int == 0)
        #expect(report["users"] as? Int == 198)
        let lru = try series(report, "lru")
        let lost = lru.compactMap { $0["lost"] as? Int }
        #expect(lost.count == 10)
        #expect(zip(lost, lost.dropFirst()).allSatisfy { $0 >= $1 }, "an LRU keeps what a smaller one keeps: \(lost)")
        #expect(lost.first! > 0 && lost.last == 0, "room for everyone loses no one")
        #expect(try series(report, "nscache").count == 10)
    }

    @Test func theChartIsWellFormedSVGWithALossAndAStaleLinePerEvictingStorage() throws {
        let chart = FileManager.default.temporaryDirectory.appendingPathComponent("sweep-\(UUID().uuidString).svg")
        defer { try? FileManager.default.removeItem(at: chart) }
        _ = try sweep(["--sweep", "count-limit=10..198", "--steps", "6", "--chart", chart.path])
        // Well-formed XML, checked by libexpat through the stream parser (an implicit stream of one element).
        var svg: Stanza?
        let parser = XMPPStreamParser()
        try parser.feed(Array(try Data(contentsOf: chart))) { if case .stanza(let stanza) = $0 { svg = stanza } }
        try parser.finish { _ in }
        let root = try #require(svg)
        #expect(root.isElement(root.root, named: "svg", in: "http://www.w3.org/2000/svg"))
        let lines = root.children(of: root.root).filter { root.localName(of: $0) == "polyline" }
        func storages(_ kind: String) -> [String] {
            lines.filter { root.attribute("class", of: $0) == kind }
                .compactMap { root.attribute("data-storage", of: $0) }.sorted()
        }
        #expect(storages("loss") == ["lru", "nscache"])
        #expect(storages("stale") == ["lru", "nscache"])
        let text = try String(contentsOf: chart, encoding: .utf8)
        #expect(text.contains("198 users, 1,500 updates"))
        #expect(text.contains("dictionary keeps all"))
        #expect(!text.contains("<script"), "no script, nothing fetched")
    }

    @Test func costLimitsAreSizesAndStandardInputIsReadOnce() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: CLI.sample("office-morning.xml")))
        let result = try CLI.run(
            ["compare", "-", "--sweep", "cost-limit=2KiB..64KiB", "--steps", "4"], stdinChunks: [bytes])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("cost-limit"))
        #expect(result.stdout.contains("64.0 KiB") || result.stdout.contains("64 KiB"))
        #expect(result.stdout.contains("dictionary: lost 0"))
    }

    @Test(arguments: [
        ["--chart", "/tmp/x.svg"], ["--sweep", "count-limit=50..50"], ["--sweep", "count-limit=..9"],
        ["--sweep", "ttl=1..9"], ["--sweep", "count-limit=1..9", "--count-limit", "5"],
        ["--sweep", "count-limit=1..9", "--steps", "1"],
    ])
    func aSweepThatMakesNoSenseIsRefusedBeforeRunning(arguments: [String]) throws {
        let result = try CLI.run(["compare", CLI.sample("office-morning.xml")] + arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
    }
}
