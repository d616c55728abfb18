import Foundation

/// A real XMPP server of the benchmark's own on a free loopback port, with `members` accounts (`m00000`...) and a
/// watcher whose roster holds every member, and every member has the watcher as a contact; no member sees the
/// others.
public protocol LoadServer: AnyObject, Sendable {
    /// `Prosody` or `ejabberd`, for the reports.
    var name: String { get }
    var domain: String { get }
    var port: Int { get }
    /// The server's process, for its CPU time and resident memory.
    var processIdentifier: Int32 { get }
    func stop()
}

extension LoadServer {
    /// CPU seconds the server has used so far (utime + stime from /proc).
    public func cpuSeconds() -> Double { processCPUSeconds(processIdentifier) }
}

/// The accounts every load server has.
public enum LoadAccounts {
    public static let password = "pw"

    /// Member `index`'s account name.
    public static func member(_ index: Int) -> String { String(format: "m%05d", index) }
}

/// Starts `kind` (`prosody` or `ejabberd`) with `members` accounts.
/// - Parameter garbageCollector: Prosody's `gc` mode (`incremental` or `generational`); ignored by ejabberd.
/// - Parameter limits: the client rate limits it runs with.
public func startLoadServer(
    _ kind: String, members: Int, garbageCollector: String? = nil, limits: ShippedLimits = .none
) throws -> any LoadServer {
    switch kind {
    case "ejabberd": try LoadEjabberd(members: members, limits: limits)
    case "prosody": try LoadProsody(members: members, garbageCollector: garbageCollector, limits: limits)
    default: fatalError("unknown server \(kind): prosody or ejabberd")
    }
}
