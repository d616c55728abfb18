/// The values a setting accepts beyond its type (`--events-retry` between 1 and 3600000 milliseconds), declared
/// with its key so that the check, and the error naming where a value out of bounds was set, exist once.
struct SettingBounds<Value>: Sendable {
    /// What the value must be, as an error says it: "at least 1", "between 0.1 and 86400 seconds".
    let requirement: String
    let admits: @Sendable (Value) -> Bool
}

/// A setting that is a quantity, so it can have bounds.
protocol QuantitySetting: SettingValue {
    associatedtype Quantity: Comparable & SettingValue
    /// The quantity bounds are checked against; nil (an optional setting with no value, `never`) is always
    /// within them.
    var quantity: Quantity? { get }
}

extension Int: QuantitySetting {
    var quantity: Int? { self }
}

extension Double: QuantitySetting {
    var quantity: Double? { self }
}

extension ByteSize: QuantitySetting {
    var quantity: Int? { bytes }
}

extension SecondsOrNever: QuantitySetting {
    var quantity: Double? { seconds }
}

extension Optional: QuantitySetting where Wrapped: QuantitySetting {
    var quantity: Wrapped.Quantity? { self?.quantity }
}

extension SettingBounds where Value: QuantitySetting {
    static func atLeast(_ lower: Value.Quantity, _ unit: String = "") -> Self {
        SettingBounds(requirement: "at least \(text(lower))\(unit.isEmpty ? "" : " " + unit)") { value in
            value.quantity.map { $0 >= lower } ?? true
        }
    }

    static func between(_ lower: Value.Quantity, _ upper: Value.Quantity, _ unit: String = "") -> Self {
        SettingBounds(requirement: "between \(text(lower)) and \(text(upper))\(unit.isEmpty ? "" : " " + unit)") {
            value in value.quantity.map { (lower ... upper).contains($0) } ?? true
        }
    }

    private static func text(_ quantity: Value.Quantity) -> String { quantity.settingText ?? "" }
}
