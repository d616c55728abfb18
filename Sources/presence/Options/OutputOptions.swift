import ArgumentParser

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
}

struct OutputOptions: ParsableArguments {
    @Option(name: .customLong("format"), help: "text for people, json for scripts (one document on stdout).")
    var format: OutputFormat = .text

    @Option(name: .customLong("lost-users"), help: "How many lost users to list (default 20).")
    var lostUsers: Int = 20

    func validate() throws {
        if lostUsers < 0 { throw ValidationError("--lost-users must not be negative") }
    }
}
