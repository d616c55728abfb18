import Foundation
import PresenceTestSupport
import Testing

/// The ejabberd lines the Deploying guide tells an operator to add are the lines the tests' servers run with: a
/// recipe edited in one place and not the other fails here.
@Suite("The Deploying guide's ejabberd recipes are the ones the tests run")
struct DeployingRecipesTests {
    private static func guide() throws -> String {
        try String(
            contentsOf: CLI.repository.appendingPathComponent("Documentation/Deploying.md"), encoding: .utf8)
    }

    @Test func theSessionsGrantIsTheOneTheTestsServersHave() throws {
        #expect(try Self.guide().contains(EjabberdServer.sessionsGrant(watcher: "watcher@corp.example")))
    }

    @Test func theShaperExemptionIsTheOneTheTestsServersHave() throws {
        let guide = try Self.guide()
        #expect(guide.contains(EjabberdServer.exemptionACL(watcher: "watcher@corp.example")))
        #expect(guide.contains(EjabberdServer.exemptionRule))
    }

    @Test func theLDAPRecipeHasTheModuleOptionsTheTestsServersHave() throws {
        let guide = try Self.guide()
        let directory = OpenLDAPDirectory.optionsForTheGuide()
        for option in directory {
            #expect(guide.contains("    \(option)"), "\(option) in the guide's mod_shared_roster_ldap")
        }
    }
}
