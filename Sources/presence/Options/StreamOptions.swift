import ArgumentParser
import PresenceIngest
import XMPPStream

/// Parser and decoder limits, each with the parser's default.
struct StreamOptions: ParsableArguments, SettingFlags {
    @Option(name: SettingKeys.maxStanzaBytes.flag, help: SettingKeys.maxStanzaBytes.help)
    var maxStanzaBytes: Int?

    @Option(name: SettingKeys.maxDepth.flag, help: SettingKeys.maxDepth.help)
    var maxDepth: Int?

    @Option(name: SettingKeys.maxChildren.flag, help: SettingKeys.maxChildren.help)
    var maxChildren: Int?

    @Option(name: SettingKeys.maxStatusBytes.flag, help: SettingKeys.maxStatusBytes.help)
    var maxStatusBytes: Int?

    func record(into flags: inout FlagLayer) {
        flags.record(SettingKeys.maxStanzaBytes, maxStanzaBytes)
        flags.record(SettingKeys.maxDepth, maxDepth)
        flags.record(SettingKeys.maxChildren, maxChildren)
        flags.record(SettingKeys.maxStatusBytes, maxStatusBytes)
    }
}

/// The parser and decoder limits in force.
struct StreamLimits {
    let configuration: XMPPStreamParser.Configuration
    let decoder: PresenceDecoder

    init(_ settings: Settings) throws {
        let maxStanzaBytes = try settings(SettingKeys.maxStanzaBytes)
        let maxDepth = try settings(SettingKeys.maxDepth)
        let maxChildren = try settings(SettingKeys.maxChildren)
        let maxStatusBytes = try settings(SettingKeys.maxStatusBytes)
        configuration = XMPPStreamParser.Configuration(
            limits: XMPPStreamLimits(
                maxStanzaBytes: maxStanzaBytes, maxElementDepth: maxDepth, maxChildElements: maxChildren))
        decoder = PresenceDecoder(maximumStatusBytes: maxStatusBytes)
    }
}
