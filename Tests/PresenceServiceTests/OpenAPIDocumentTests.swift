import Testing

@testable import PresenceService

/// The document a service serves says what that service does: its tokens and its limits.
@Suite("The served OpenAPI document is this deployment's")
struct OpenAPIDocumentTests {
    static let token = "tok-0123456789abcdef+/="

    @Test func everyRewriteFindsWhatItRewrites() {
        #expect(OpenAPIDocument.rewritesApply)
    }

    @Test func theDocumentCarriesTheServicesLimitsAndTokens() throws {
        func text(_ access: APIAccess, batch: Int = 1000, stream: Int = 10000) -> String {
            String(
                decoding: OpenAPIDocument(access: access, maxBatchJIDs: batch, maxJIDsPerStream: stream).bytes,
                as: UTF8.self)
        }
        let tokens = try APIAccess(tokenFile: "\(Self.token) dashboards\n")
        #expect(text(tokens) == OpenAPIDocument.repository, "tokens and default limits: the repository's document")
        let open = text(.open, batch: 50, stream: 7)
        #expect(open.contains("\nsecurity: []\n") && !open.contains("  - bearerToken: []\n  - tokenCookie: []"))
        #expect(open.contains("maxItems: 50 # --http-max-batch") && open.contains("maxItems: 7 # --events-max-jids"))
        let metricsOpen = text(try APIAccess(tokenFile: "\(Self.token) dashboards\n", metricsOpen: true))
        #expect(metricsOpen.contains("  /metrics:\n    get:\n      security: []\n"))
        #expect(metricsOpen.contains("  - bearerToken: []"), "everything else still needs a token")
    }

    @Test func theRouteTableIsTheDocumentsPathsAndEachIsOpenAsTheDocumentSays() throws {
        let lines = OpenAPIDocument.repository.split(separator: "\n")
        let start = try #require(lines.firstIndex(of: "paths:"))
        var paths: [String: Bool] = [:]  // path: answered without a token (its operation says `security: []`)
        var current: String?
        for line in lines[(start + 1)...] {
            if !line.hasPrefix(" ") { break }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                current = String(line.dropFirst(2).dropLast())
                paths[current!] = false
            } else if let path = current, line == "      security: []" {
                paths[path] = true
            }
        }
        #expect(Set(paths.keys) == Set(ServiceRoute.allCases.map(\.template)), "the table and the document agree")
        for route in ServiceRoute.allCases {
            let open = paths[route.template] ?? false
            // /metrics needs a token unless --metrics-open: the document written for the repository has it closed.
            #expect(route.isOpen(metricsOpen: false) == open, "\(route.template): open \(open) in the document")
            // Every template, with a JID in its place, is read back as its own route.
            let path = route.template.replacingOccurrences(of: "{jid}", with: "alice@example.com")
            #expect(ServiceRoute(path: Substring(path)) == route, "\(path)")
        }
        for unknown in [
            "/v1/presence/", "/v1/presence//badge.svg", "/v1/presence/a/b", "/v1/presencex", "/v1/presence/a/badge.svg/x",
            "/v1/stats/", "/people.html", "",
        ] {
            #expect(ServiceRoute(path: Substring(unknown)) == nil, "\(unknown) is no route")
        }
    }
}
