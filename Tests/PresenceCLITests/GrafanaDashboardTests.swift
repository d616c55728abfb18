import Foundation
import PresenceTestSupport
import Testing

/// The shipped Grafana dashboard (`Samples/deploy/grafana-dashboard.json`) against a running service's
/// `/metrics`: every metric a panel queries is one the service exports, so the dashboard cannot drift from the
/// code.
@Suite("The shipped Grafana dashboard", .realServers)
struct GrafanaDashboardTests {
    static let dashboard = CLI.repository.appendingPathComponent("Samples/deploy/grafana-dashboard.json")

    /// Every `expr` in the dashboard, panels inside rows included.
    static func queries(in value: Any) -> [String] {
        if let object = value as? [String: Any] {
            let own = (object["expr"] as? String).map { [$0] } ?? []
            return own + object.values.flatMap { queries(in: $0) }
        }
        if let array = value as? [Any] { return array.flatMap { queries(in: $0) } }
        return []
    }

    /// The metric names a Prometheus text exposition declares or has samples of.
    static func exported(_ exposition: String) -> Set<String> {
        var names = Set<String>()
        for line in exposition.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                names.insert(String(line.split(separator: " ")[2]))
            } else if !line.hasPrefix("#") {
                names.insert(String(line.prefix { $0 != "{" && $0 != " " }))
            }
        }
        return names
    }

    @Test func everyPanelQueriesOnlyMetricsARunningServiceExportsForTheChosenInstances() async throws {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.dashboard))
        let dashboard = try #require(json as? [String: Any])
        #expect(dashboard["uid"] as? String == "presence-store")
        let panels = (dashboard["panels"] as? [[String: Any]] ?? []).flatMap { panel in
            [panel] + (panel["panels"] as? [[String: Any]] ?? [])
        }
        let charts = panels.filter { $0["type"] as? String != "row" }
        #expect(charts.count >= 20)
        for chart in charts {
            #expect(!Self.queries(in: chart).isEmpty, "panel '\(chart["title"] ?? "?")' queries nothing")
            #expect(chart["description"] as? String != nil, "panel '\(chart["title"] ?? "?")' says what it tells")
        }
        let queries = Self.queries(in: dashboard)
        for query in queries {
            #expect(query.contains("instance=~\"$instance\""), "follows the instance chosen: \(query)")
        }

        // A service with everything that has metrics: an XMPP source (and so probes and the resync), a disk tier.
        let server = try await XMPPServerKind.prosody.start(
            accounts: ["watcher": ServeReplicaTests.password, "bob": "b"], groups: ["Staff": ["watcher", "bob"]])
        defer { server.stop() }
        let data = server.directory.appendingPathComponent("dashboard-data-\(UUID())").path
        let replica = try await RunningServer.started(
            try ServeReplicaTests.replicaArguments(server, resource: "dashboard") + [
                "--data-dir", data, "--disk-flush-interval", "200",
            ])
        defer { _ = replica.stop() }
        #expect(try await eventually { try await ServeReplicaTests.get("/readyz", port: replica.httpPort).status == 200 })
        // One flush, so the disk tier's counters of what it wrote exist.
        func metrics() async throws -> String {
            String(
                decoding: try await TestHTTP.get(port: replica.httpPort, path: "/metrics").body,
                as: UTF8.self)
        }
        #expect(try await eventually { try await metrics().contains("presence_disk_users_written_total") })
        let exported = Self.exported(try await metrics())

        let referenced = Set(
            queries.flatMap { query in
                query.matches(of: /presence_[a-z0-9_]+/).map { String($0.output) }
            })
        #expect(referenced.count >= 30)
        let missing = referenced.subtracting(exported).sorted()
        #expect(missing.isEmpty, "queried by the dashboard but not exported: \(missing)")
        #expect(await replica.stopped() == 0)
    }
}
