import ArgumentParser
import PresenceService
import PresenceSource
import XMPPClient

/// The type of a setting: read from the same text whether it comes from a flag, a `PRESENCE_*` variable or a
/// configuration file, so a value means one thing in every layer.
protocol SettingValue: Sendable {
    /// The value `settingText` stands for; nil when the text is not one.
    init?(settingText: String)
    /// The text that reads back as this value; nil for an optional setting that has none.
    var settingText: String? { get }
    /// What a valid text looks like, for errors ("a whole number").
    static var expectation: String { get }
    /// Whether a value is given by naming the key alone (`--psi`): true for on/off settings.
    static var isSwitch: Bool { get }
}

extension SettingValue {
    static var isSwitch: Bool { false }
}

extension Int: SettingValue {
    init?(settingText: String) { self.init(settingText) }
    var settingText: String? { String(self) }
    static var expectation: String { "a whole number" }
}

extension Double: SettingValue {
    init?(settingText: String) {
        guard let value = Double(settingText), value.isFinite else { return nil }
        self = value
    }

    /// `30` rather than `30.0`, so that what `--print-config` prints reads as what an operator types.
    var settingText: String? {
        if self == rounded(), abs(self) < 1e15 { return String(Int64(self)) }
        return String(self)
    }

    static var expectation: String { "a number" }
}

extension String: SettingValue {
    init?(settingText: String) { self = settingText }
    var settingText: String? { self }
    static var expectation: String { "text" }
}

extension Bool: SettingValue {
    /// `true` or `false`, and the words YAML reads as them (`yes`/`no`, `on`/`off`).
    init?(settingText: String) {
        switch settingText.lowercased() {
        case "true", "yes", "on": self = true
        case "false", "no", "off": self = false
        default: return nil
        }
    }

    var settingText: String? { self ? "true" : "false" }
    static var expectation: String { "true or false" }
    static var isSwitch: Bool { true }
}

extension Optional: SettingValue where Wrapped: SettingValue {
    init?(settingText: String) {
        guard let value = Wrapped(settingText: settingText) else { return nil }
        self = .some(value)
    }

    var settingText: String? { self?.settingText }
    static var expectation: String { Wrapped.expectation }
    static var isSwitch: Bool { Wrapped.isSwitch }
}

/// A setting that is one of a fixed set of words.
protocol WordSetting: SettingValue, RawRepresentable<String>, CaseIterable {}

extension WordSetting {
    init?(settingText: String) { self.init(rawValue: settingText) }
    var settingText: String? { rawValue }
    static var expectation: String { "one of " + allCases.map(\.rawValue).joined(separator: ", ") }
}

extension TLSPolicy: WordSetting {}
extension ReadinessConfiguration.WhenNotReady: WordSetting {}
extension ResyncConfiguration.Members: WordSetting {}

/// A setting whose text is its flag's argument, read by the flag's own parser and written by its description.
protocol ArgumentSetting: SettingValue, ExpressibleByArgument, CustomStringConvertible {}

extension ArgumentSetting {
    init?(settingText: String) { self.init(argument: settingText) }
    var settingText: String? { description }
}

extension ByteSize: ArgumentSetting {
    static var expectation: String { "a size such as 512MiB" }
}

extension HostAndPort: ArgumentSetting {
    static var expectation: String { "HOST:PORT" }
}

extension SecondsOrNever: ArgumentSetting {
    static var expectation: String { "seconds or never" }
}

extension StorageName: ArgumentSetting {
    static var expectation: String { Self.choices }
}
