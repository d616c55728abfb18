import Foundation
import Testing

@testable import PresenceService

/// The document every service serves as it is written, and what it says holds for every deployment.
@Suite("The served OpenAPI document")
struct OpenAPIDocumentTests {
    static let repository = String(decoding: CompiledFile.openAPIDocument.bytes, as: UTF8.self)

    /// One file for every deployment: it names no limit a flag changes as a schema bound, and it lets a request
    /// without a token through as one of its alternatives (an open service) while naming the token schemes (one that
    /// requires tokens).
    @Test func theDocumentHoldsForEveryDeploymentAsWritten() {
        let lines = Self.repository.split(separator: "\n")
        #expect(!lines.contains { $0.contains("maxItems") && $0.contains("--") }, "a flag's limit as a schema bound")
        #expect(Self.repository.contains("\nsecurity:\n  - bearerToken: []\n  - tokenCookie: []\n  - {}"))
        // The limits it states in words are the defaults.
        #expect(Self.repository.contains("`--http-max-batch` (\(Self.grouped(HTTPLimits.defaultMaxBatchJIDs)) by default)"))
        #expect(
            Self.repository.contains(
                "`--events-max-jids` (\(Self.grouped(EventStreamConfiguration.defaultMaxJIDsPerStream)) by default)"))
    }

    /// A number as the document writes it: thousands grouped with commas.
    static func grouped(_ number: Int) -> String {
        number.formatted(.number.locale(Locale(identifier: "en_US")))
    }

    @Test func theRouteTableIsTheDocumentsPathsAndEachIsOpenAsTheDocumentSays() throws {
        let lines = Self.repository.split(separator: "\n")
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
