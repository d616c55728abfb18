import Foundation

/// A real XMPP server of the benchmark's own on a free loopback port, with `members` accounts (`m00000`...) and a
/// watcher whose roster holds every member, and every member has the watcher as a contact; whether the members see
/// each other is the ``RosterDesign``'s to say.
public protocol LoadServer: AnyObject, Sendable {
    /// `Prosody` or `ejabberd`, for the reports.
    var name: String { get }
    var domain: String { get }
    var port: Int { get }
    /// The server's process, for its CPU time and resident memory.
    var processIdentifier: Int32 { get }
    /// The server's API that lists every session (`EjabberdSessionDirectory`), nil when it has none.
    var sessionsAPI: URL? { get }
    func stop()
}

extension LoadServer {
    /// CPU seconds the server has used so far (utime + stime from /proc).
    public func cpuSeconds() -> Double { processCPUSeconds(processIdentifier) }
}

/// How an organisation shares its people's rosters, each set up the way its server's administrators do.
public enum RosterDesign: String, Sendable {
    /// The members in a group only the watchers see, each member named: the members see the watcher only.
    case named
    /// Everyone sees everyone: on ejabberd one shared roster group holding `@all@` that displays itself, on
    /// Prosody one `mod_groups` group listing every account.
    case everyone
    /// Everyone sees everyone, the group kept in an LDAP directory: ejabberd's `mod_shared_roster_ldap` over an
    /// OpenLDAP `posixGroup` listing every account (ejabberd only).
    case directory
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
/// - Parameter roster: how the members share rosters.
public func startLoadServer(
    _ kind: String, members: Int, garbageCollector: String? = nil, limits: ShippedLimits = .none,
    roster: RosterDesign = .named
) throws -> any LoadServer {
    switch kind {
    case "ejabberd": try LoadEjabberd(members: members, limits: limits, roster: roster)
    case "prosody":
        try LoadProsody(members: members, garbageCollector: garbageCollector, limits: limits, roster: roster)
    default: fatalError("unknown server \(kind): prosody or ejabberd")
    }
}
