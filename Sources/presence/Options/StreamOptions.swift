import ArgumentParser
import PresenceIngest
import XMPPStream

/// Parser and decoder limits, each with the parser's default.
struct StreamOptions: ParsableArguments {
    @Option(name: .customLong("max-stanza-bytes"), help: "Largest stanza in raw input bytes (default 262144).")
    var maxStanzaBytes: Int = XMPPStreamLimits.defaultMaxStanzaBytes

    @Option(name: .customLong("max-depth"), help: "Deepest element nesting inside a stanza (default 32).")
    var maxDepth: Int = XMPPStreamLimits.defaultMaxElementDepth

    @Option(name: .customLong("max-children"), help: "Most elements inside one stanza (default 1024).")
    var maxChildren: Int = XMPPStreamLimits.defaultMaxChildElements

    @Option(name: .customLong("max-status-bytes"), help: "Statuses are cut to this many bytes (default 1024).")
    var maxStatusBytes: Int = PresenceDecoder.defaultMaximumStatusBytes

    func validate() throws {
        if maxStanzaBytes < 64 { throw ValidationError("--max-stanza-bytes must be at least 64") }
        if maxDepth < 1 { throw ValidationError("--max-depth must be at least 1") }
        if maxChildren < 0 { throw ValidationError("--max-children must not be negative") }
        if maxStatusBytes < 0 { throw ValidationError("--max-status-bytes must not be negative") }
    }

    var configuration: XMPPStreamParser.Configuration {
        .init(
            limits: XMPPStreamLimits(
                maxStanzaBytes: maxStanzaBytes, maxElementDepth: maxDepth, maxChildElements: maxChildren))
    }

    var decoder: PresenceDecoder { PresenceDecoder(maximumStatusBytes: maxStatusBytes) }
}
