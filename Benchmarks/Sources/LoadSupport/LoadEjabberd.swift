import Foundation

/// An ejabberd of the benchmark's own: configuration, Mnesia spool and logs in a temporary directory, its own node
/// name, Erlang distribution on a port of its own (no `epmd`), c2s and the HTTP API on loopback ports. Accounts and
/// shared roster groups go through the HTTP API. With ``RosterDesign/named``, `people` (every member, named) displays
/// `watchers` (the watcher) and the other way round, so the watcher has everyone and each member has the watcher
/// only; with ``RosterDesign/everyone``, `people` holds `@all@` and displays itself; with ``RosterDesign/directory``,
/// `mod_shared_roster_ldap` reads one group of everyone from an OpenLDAP directory (``OpenLDAPDirectory``).
public final class LoadEjabberd: LoadServer {
    public let name = "ejabberd"
    public let domain = "example.test"
    public let port: Int
    private let apiPort: Int
    private let directory: URL
    private let process: Process
    /// The LDAP directory the shared rosters come from, with ``RosterDesign/directory``.
    private let people: OpenLDAPDirectory?

    public init(members: Int, limits: ShippedLimits = .none, roster: RosterDesign = .named) throws {
        let limits = try limits.ejabberd(watcher: "watcher@example.test")
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ejabberd-load-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("spool"), withIntermediateDirectories: true)
        let base = 20_000 + Int.random(in: 0 ..< 20_000)
        (port, apiPort) = (base, base + 1)
        let distributionPort = base + 2
        let names = (0 ..< members).map(LoadAccounts.member)
        let people =
            roster == .directory
            ? try OpenLDAPDirectory(
                port: base + 3, people: names + ["watcher"], group: "everyone", members: ["watcher"] + names) : nil
        self.people = people
        let ldap = people?.ejabberdConfiguration()
        let rosterModule = ldap.map { ", mod_shared_roster_ldap: \($0.module)" } ?? ", mod_shared_roster: {}"
        try """
        hosts: ["\(domain)"]
        loglevel: warning
        auth_method: internal
        auth_password_format: plain
        listen:
          - {port: \(port), ip: "127.0.0.1", module: ejabberd_c2s, max_stanza_size: 33554432\(limits.listenerShaper)}
          - {port: \(apiPort), ip: "127.0.0.1", module: ejabberd_http, request_handlers: {/api: mod_http_api}}
        api_permissions:
          "loopback administration": {who: {ip: 127.0.0.1/8}, what: ["*"]}
        access_rules:
          local: {allow: all}
          c2s: {allow: all}
        \(limits.sections)
        \(ldap?.topLevel ?? "")
        modules: {mod_admin_extra: {}, mod_disco: {}, mod_http_api: {}, mod_last: {}, mod_ping: {}, mod_roster: {}\(rosterModule)}
        """.write(to: directory.appendingPathComponent("ejabberd.yml"), atomically: false, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/erl")
        process.currentDirectoryURL = directory
        process.arguments = [
            "-sname", "presenceload\(base)@localhost", "-erl_epmd_port", String(distributionPort), "-start_epmd",
            "false", "+K", "true", "+P", "1000000", "-noinput", "-mnesia", "dir",
            "\"\(directory.appendingPathComponent("spool").path)\"", "-s", "ejabberd",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["EJABBERD_CONFIG_PATH"] = directory.appendingPathComponent("ejabberd.yml").path
        environment["EJABBERD_LOG_PATH"] = directory.appendingPathComponent("ejabberd.log").path
        environment["ERL_LIBS"] = "/usr/lib/x86_64-linux-gnu"
        environment["ERL_INETRC"] = "/etc/ejabberd/inetrc"
        environment["ERL_DIST_PORT"] = String(distributionPort)
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(180)
        while (try? api("status", [:])) == nil {
            guard ContinuousClock.now < deadline, process.isRunning else { throw LoadServerFailure.didNotStart }
            Thread.sleep(forTimeInterval: 0.1)
        }
        for name in (0 ..< members).map(LoadAccounts.member) + ["watcher"] {
            try api("register", ["user": name, "host": domain, "password": LoadAccounts.password])
        }
        switch roster {
        case .directory:
            break
        case .everyone:
            try api(
                "srg_create",
                ["group": "people", "host": domain, "label": "people", "description": "", "display": "people"])
            try api("srg_user_add", ["user": "@all@", "host": domain, "group": "people", "grouphost": domain])
        case .named:
            try api(
                "srg_create",
                ["group": "people", "host": domain, "label": "people", "description": "", "display": "watchers"])
            try api(
                "srg_create",
                ["group": "watchers", "host": domain, "label": "watchers", "description": "", "display": "people"])
            try api("srg_user_add", ["user": "watcher", "host": domain, "group": "watchers", "grouphost": domain])
            for name in (0 ..< members).map(LoadAccounts.member) {
                try api("srg_user_add", ["user": name, "host": domain, "group": "people", "grouphost": domain])
            }
        }
    }

    /// One command of ejabberd's HTTP API (GET with the arguments in the query: all of them plain words here).
    @discardableResult
    private func api(_ command: String, _ arguments: [String: String]) throws -> String {
        let query = arguments.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        let response = try LoadHTTP.get(port: apiPort, path: "/api/\(command)?\(query)")
        guard response.status == 200 else { throw LoadServerFailure.api(command, response.status) }
        return String(decoding: response.body, as: UTF8.self)
    }

    public var processIdentifier: Int32 { process.processIdentifier }

    public var sessionsAPI: URL? { URL(string: "http://127.0.0.1:\(apiPort)/api") }

    public func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        people?.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

enum LoadServerFailure: Error {
    case didNotStart
    case api(String, Int)
    case missing(String)
}
