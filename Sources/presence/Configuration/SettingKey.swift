import ArgumentParser
import Configuration

/// One setting: its name (the flag `--name`, the file's key `name`, the variable `PRESENCE_NAME`), its type, its
/// default and its help. The flag's help, the file's checks, the environment's names and `--print-config` all come
/// from it, so a setting is declared once.
struct SettingKey<Value: SettingValue>: Sendable {
    let name: String
    /// One line: what the setting does, without its default (the help adds it).
    let abstract: String
    let discussion: String
    /// The value when no layer sets one (nil for an optional setting that is off unless given).
    let defaultValue: Value
    /// How the help shows a default that is not a plain value ("one per core", "32MiB"); nil shows the value.
    let shownDefault: String?
    /// The values it accepts beyond its type; nil for any.
    let bounds: SettingBounds<Value>?
    /// The setting is the path of a file that holds a secret: the path is a setting, the secret never is.
    let namesSecretFile: Bool

    init(
        _ name: String, _ abstract: String, default defaultValue: Value, shown shownDefault: String? = nil,
        bounds: SettingBounds<Value>? = nil, discussion: String = "", namesSecretFile: Bool = false
    ) {
        self.bounds = bounds
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.defaultValue = defaultValue
        self.shownDefault = shownDefault
        self.namesSecretFile = namesSecretFile
    }

    /// The flag's long name.
    var flag: NameSpecification { .customLong(name) }

    /// The default as help and the guides show it; nil for an on/off setting or one that is off unless given.
    var documentedDefault: String? {
        Value.isSwitch ? nil : shownDefault ?? defaultValue.settingText
    }

    /// The flag's help: the abstract and its documented default.
    var help: ArgumentHelp {
        let text = abstract + (documentedDefault.map { " (default \($0))" } ?? "")
        return ArgumentHelp(text + ".", discussion: discussion, valueName: Value.isSwitch ? nil : name)
    }

    var configKey: ConfigKey { ConfigKey([name]) }

    /// The key without its type, for the table.
    var erased: AnySettingKey {
        AnySettingKey(
            name: name, isSwitch: Value.isSwitch, namesSecretFile: namesSecretFile,
            defaultText: defaultValue.settingText, documentedDefault: documentedDefault,
            expectation: Value.expectation,
            accepts: { Value(settingText: $0) != nil })
    }
}

/// A ``SettingKey`` without its type: what the table of keys, the file's and the environment's checks and
/// `--print-config` need.
struct AnySettingKey: Sendable {
    let name: String
    let isSwitch: Bool
    let namesSecretFile: Bool
    /// The default as a file would hold it; nil for an optional setting that is off unless given.
    let defaultText: String?
    /// The default as help and the guides show it (``SettingKey/documentedDefault``).
    let documentedDefault: String?
    let expectation: String
    /// Whether `text` reads as a value of the key's type.
    let accepts: @Sendable (_ text: String) -> Bool

    /// `PRESENCE_` and the name in capitals, `-` as `_`.
    var environmentVariable: String {
        "PRESENCE_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    var configKey: ConfigKey { ConfigKey([name]) }

    /// Why `text` is not a value of this key, or nil when it is one.
    func refusal(of text: String) -> String? {
        accepts(text) ? nil : "'\(text)' is invalid: \(expectation) is expected"
    }
}
