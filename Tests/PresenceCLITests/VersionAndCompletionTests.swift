import Foundation
import PresenceService
import Testing

/// What an operator and a shell need from the command itself: which build it is, and completions.
@Suite("presence --version and shell completions")
struct VersionAndCompletionTests {
    @Test func theVersionIsPrintedAndIsTheOneTheServiceLogs() throws {
        let result = try CLI.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == PresenceVersion.current)
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func everyShellGetsCompletionsForTheSubcommandsAndTheServiceFlags(shell: String) throws {
        let result = try CLI.run(["--generate-completion-script", shell])
        #expect(result.status == 0, "\(result.stderr)")
        for word in ["serve", "compare", "watch", "xmpp-jid", "when-not-ready", "data-dir"] {
            #expect(result.stdout.contains(word), "the \(shell) completions know \(word)")
        }
    }
}
