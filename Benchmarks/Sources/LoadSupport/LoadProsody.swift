import Foundation

/// A Prosody of the benchmark's own on a free loopback port, with `members` accounts (`m00000`...) and a watcher,
/// With ``RosterDesign/named``, each member shares one `mod_groups` group with the watcher only: the watcher's roster
/// holds every member and no member sees the others. With ``RosterDesign/everyone``, one group lists every account.
public final class LoadProsody: LoadServer {
    public let name = "Prosody"
    public let domain = "example.test"
    public let port: Int
    public let memberCount: Int
    private let directory: URL
    private let process: Process

    public static let password = LoadAccounts.password

    /// - Parameter garbageCollector: Prosody's `gc` mode, `incremental` (its default) or `generational` (Lua 5.4).
    public init(
        members: Int, garbageCollector: String? = nil, limits: ShippedLimits = .none, roster: RosterDesign = .named
    ) throws {
        memberCount = members
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("prosody-load-\(UUID().uuidString)")
        let accounts = directory.appendingPathComponent("data/example%2etest/accounts")
        try FileManager.default.createDirectory(at: accounts, withIntermediateDirectories: true)
        // internal_plain accounts written directly: registering 10,000 accounts through prosodyctl takes minutes.
        for name in (0 ..< members).map(LoadProsody.member) + ["watcher"] {
            try "return { [\"password\"] = \"\(LoadProsody.password)\"; };\n".write(
                to: accounts.appendingPathComponent("\(name).dat"), atomically: false, encoding: .utf8)
        }
        var groups = ""
        switch roster {
        case .directory:
            throw LoadServerFailure.missing("an LDAP-backed roster on Prosody (the benchmark runs it on ejabberd)")
        case .everyone:
            groups = "[everyone]\nwatcher@\(domain)\n"
            for index in 0 ..< members { groups += "\(LoadProsody.member(index))@\(domain)\n" }
        case .named:
            for index in 0 ..< members {
                groups += "[g\(index)]\nwatcher@\(domain)\n\(LoadProsody.member(index))@\(domain)\n"
            }
        }
        try groups.write(to: directory.appendingPathComponent("groups.txt"), atomically: false, encoding: .utf8)
        let limits = try limits.prosody(watcher: "watcher@example.test")
        port = 20_000 + Int.random(in: 0 ..< 20_000)
        try """
        run_as_root = true
        pidfile = "\(directory.path)/prosody.pid"
        data_path = "\(directory.path)/data"
        network_backend = "epoll"
        \(garbageCollector.map { "gc = { mode = \"\($0)\" }" } ?? "")
        modules_enabled = { "roster"; "saslauth"; "disco"; "ping"; "groups"\(limits.module) }
        modules_disabled = { "s2s" }
        c2s_ports = { \(port) }
        c2s_interfaces = { "127.0.0.1" }
        s2s_ports = { }
        http_ports = { }
        https_ports = { }
        legacy_ssl_ports = { }
        c2s_direct_tls_ports = { }
        authentication = "internal_plain"
        c2s_require_encryption = false
        groups_file = "\(directory.path)/groups.txt"
        log = { warn = "\(directory.path)/prosody.log" }
        \(limits.lines)
        VirtualHost "\(domain)"
        """.write(to: directory.appendingPathComponent("prosody.cfg.lua"), atomically: false, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prosody")
        process.arguments = ["--config", directory.appendingPathComponent("prosody.cfg.lua").path, "-F"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        Thread.sleep(forTimeInterval: 2)
    }

    /// Member `index`'s account name.
    public static func member(_ index: Int) -> String { LoadAccounts.member(index) }

    /// Prosody's process, for its CPU time and resident memory.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Prosody answers a probe of a member without a session: it has no list of sessions to ask.
    public var sessionsAPI: URL? { nil }

    public func stop() {
        kill(process.processIdentifier, SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }
}

/// CPU seconds this process has used so far.
public func ownCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

public func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Prints one line at once, also into a pipe (where standard output is otherwise block-buffered).
public func report(_ line: String) {
    print(line)
    fflush(nil)
}
