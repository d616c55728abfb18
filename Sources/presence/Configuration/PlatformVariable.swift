/// A `PRESENCE_*` environment variable that is no setting because a platform set it for a service of its own:
/// Kubernetes gives every pod of a namespace "service links" for each Service in it, so a Service named
/// `presence` or `presence-store` puts `PRESENCE_PORT=tcp://10.96.0.12:8080`, `PRESENCE_SERVICE_HOST`,
/// `PRESENCE_STORE_PORT_8080_TCP_ADDR` and the like into the service's own environment.
///
/// A variable is one only when both its name and its value have the shape Kubernetes gives them, so a near miss
/// of a real key (`PRESENCE_XMP_PORT=5222`) is still caught as a typo.
enum PlatformVariable {
    /// Why `variable` (with `value`) is a platform's, or nil when it is not.
    static func reason(_ variable: String, value: String) -> String? {
        guard variable.hasPrefix("PRESENCE") else { return nil }
        let parts = variable.split(separator: "_", omittingEmptySubsequences: false).map(String.init)
        guard parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        // From the end: <SERVICE>_SERVICE_HOST, <SERVICE>_SERVICE_PORT[_<NAME>], <SERVICE>_PORT,
        // <SERVICE>_PORT_<N>_<PROTO>[_PROTO|_PORT|_ADDR].
        let shapes: [(suffixMatches: ([String]) -> Bool, value: ValueShape)] = [
            ({ $0.suffix(2) == ["SERVICE", "HOST"] }, .address),
            ({ $0.suffix(2) == ["SERVICE", "PORT"] }, .port),
            ({ $0.count >= 4 && $0.dropLast().suffix(2) == ["SERVICE", "PORT"] }, .port),
            ({ $0.last == "PORT" }, .url),
            ({ Self.portLink($0, trailing: nil) }, .url),
            ({ Self.portLink($0, trailing: "PROTO") }, .protocolName),
            ({ Self.portLink($0, trailing: "PORT") }, .port),
            ({ Self.portLink($0, trailing: "ADDR") }, .address),
        ]
        for shape in shapes where shape.suffixMatches(parts) && shape.value.admits(value) {
            return "a Kubernetes service link"
        }
        return nil
    }

    /// `…_PORT_<number>_<TCP|UDP|SCTP>` followed by `trailing`, if any.
    private static func portLink(_ parts: [String], trailing: String?) -> Bool {
        var rest = parts[...]
        if let trailing {
            guard rest.last == trailing else { return false }
            rest = rest.dropLast()
        }
        guard rest.count >= 4, let proto = rest.last, ["TCP", "UDP", "SCTP"].contains(proto) else { return false }
        let number = rest[rest.endIndex - 2]
        return rest[rest.endIndex - 3] == "PORT" && !number.isEmpty && number.allSatisfy(\.isNumber)
    }

    private enum ValueShape {
        case address, port, url, protocolName

        func admits(_ value: String) -> Bool {
            switch self {
            case .port: return !value.isEmpty && value.allSatisfy(\.isNumber)
            case .protocolName: return ["tcp", "udp", "sctp"].contains(value)
            case .address: return !value.isEmpty && value.allSatisfy { $0.isHexDigit || ".:".contains($0) }
            case .url:
                guard let scheme = ["tcp://", "udp://", "sctp://"].first(where: value.hasPrefix) else { return false }
                let rest = value.dropFirst(scheme.count)
                guard let colon = rest.lastIndex(of: ":") else { return false }
                let port = rest[rest.index(after: colon)...]
                return !port.isEmpty && port.allSatisfy(\.isNumber)
                    && ValueShape.address.admits(String(rest[..<colon]).trimmingCharacters(in: ["[", "]"]))
            }
        }
    }
}
