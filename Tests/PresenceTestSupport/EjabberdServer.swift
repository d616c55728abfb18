import Foundation
import PresenceStore

/// A real ejabberd from Debian, started for a test: its own configuration, Mnesia spool and logs in a temporary
/// directory, its own Erlang node name, Erlang distribution on a free port of its own (`ERL_DIST_PORT`, so no
/// `epmd` is started or needed), c2s and an HTTP API listener on free loopback ports. Never the system service.
/// A node of a two-node cluster (``EjabberdCluster``) finds the other through the cluster's own `epmd` instead.
///
/// Accounts and shared roster groups are made through ejabberd's HTTP API (`mod_http_api`, loopback only), one
/// request each over loopback, instead of one `ejabberdctl` call each (an Erlang VM start, about 0.7 s).
package final class EjabberdServer: XMPPTestServer {
    package var kind: XMPPServerKind { .ejabberd }
    package let domain: String
    package let port: Int
    package let apiPort: Int
    package let directory: URL

    package var sessionsAPI: URL? { URL(string: "http://127.0.0.1:\(apiPort)/api") }
    package let certificates: TestCertificateAuthority?
    private let launch: Launch
    private let process: ServerProcess

    /// How a node's Erlang distribution is reached.
    package enum Distribution: Sendable {
        /// A node on its own: distribution on a port of its own that every Erlang node started for it is told,
        /// no `epmd`.
        case standalone(port: Int)
        /// A node of a cluster: registered with the cluster's `epmd` on `epmdPort` (distribution on any port),
        /// sharing `cookie`; a node given `joining` copies the cluster's tables from that node when it starts.
        case cluster(epmdPort: Int, cookie: String, joining: String?)

        /// Environment and arguments for any Erlang node that talks to this one: the node itself, or a hidden
        /// one that calls it.
        func apply(to environment: inout [String: String]) -> [String] {
            switch self {
            case .standalone(let port):
                environment["ERL_DIST_PORT"] = String(port)
                return ["-erl_epmd_port", String(port), "-start_epmd", "false"]
            case .cluster(let epmdPort, let cookie, _):
                environment["ERL_DIST_PORT"] = nil
                environment["ERL_EPMD_PORT"] = String(epmdPort)
                return [
                    "-setcookie", cookie, "-start_epmd", "false", "-kernel", "inet_dist_use_interface", "{127,0,0,1}",
                ]
            }
        }
    }

    /// What starts the node: the same every time, so a restart finds its spool.
    private struct Launch: Sendable {
        let node: String
        let distribution: Distribution
        let directory: URL

        var environment: [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment["EJABBERD_CONFIG_PATH"] = directory.appendingPathComponent("ejabberd.yml").path
            environment["EJABBERD_LOG_PATH"] = directory.appendingPathComponent("ejabberd.log").path
            environment["ERL_LIBS"] = "/usr/lib/x86_64-linux-gnu"
            // Name resolution from /etc/hosts and the resolver only, as `ejabberdctl` sets it.
            environment["ERL_INETRC"] = "/etc/ejabberd/inetrc"
            environment["ERL_CRASH_DUMP"] = directory.appendingPathComponent("erl_crash.dump").path
            if environment["HOME"] == nil { environment["HOME"] = directory.path }
            return environment
        }

        func start() throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/erl")
            process.currentDirectoryURL = directory
            var environment = self.environment
            // The arguments `ejabberdctl foreground` passes, without its switch to the `ejabberd` system user.
            // Schedulers that sleep when they have nothing to do instead of spinning first: a test machine runs
            // several nodes beside the suite, and spinning schedulers take its cores from everything else.
            var arguments = ["-sname", node] + distribution.apply(to: &environment) + [
                "+K", "true", "+sbwt", "none", "+sbwtdcpu", "none", "+sbwtdio", "none", "-noinput", "-mnesia", "dir",
                "\"\(directory.appendingPathComponent("spool").path)\"",
            ]
            if case .cluster(_, _, let joining?) = distribution {
                // Joins as it starts: Mnesia reaches the cluster's node, this node's schema is made a disc copy,
                // and ejabberd then makes local copies of its tables as it starts (what `ejabberdctl
                // join_cluster` ends with, without restarting ejabberd). On a restart the schema is already on
                // disc and the change is a no-op.
                arguments += [
                    "-mnesia", "extra_db_nodes", "['\(joining)']", "-eval",
                    "ok = application:start(mnesia), mnesia:change_table_copy_type(schema, node(), disc_copies).",
                ]
            }
            process.arguments = arguments + ["-s", "ejabberd"]
            process.environment = environment
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
    }

    /// The node's Erlang name, `name@localhost`.
    package var nodeName: String { launch.node }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// - Parameters:
    ///   - accounts: user name (localpart) → password.
    ///   - groups: group name → the localparts in it; a shared roster group displayed to itself, so every member
    ///     has every other in its roster with a mutual subscription.
    ///   - tls: serve STARTTLS with a certificate for `domain` issued by a test CA, and require it.
    ///   - distribution: nil for a node on its own.
    ///   - profile: the client limits it runs with.
    ///   - sharedRosters: an LDAP directory whose groups are the shared rosters (`mod_shared_roster_ldap`), in place
    ///     of `mod_shared_roster`'s groups.
    package init(
        domain: String = "example.test", accounts: [String: String], groups: [String: [String]] = [:],
        tls: Bool = false, distribution: Distribution? = nil, profile: ServerProfile = .unshaped,
        sharedRosters: OpenLDAPDirectory? = nil
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/ejabberdctl"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/erl")
        else {
            throw Failure(description: "ejabberd is not installed (apt-get install ejabberd; .ci/run does)")
        }
        self.domain = domain
        var lastError = ""
        // A port found free can be taken by someone else before ejabberd binds it: try again with others.
        for _ in 0 ..< 3 {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "ejabberd-test-\(UUID().uuidString)")
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("spool"), withIntermediateDirectories: true)
            let port = freeLoopbackPort()
            let apiPort = freeLoopbackPort()
            let certificates = tls ? try TestCertificateAuthority(directory: directory, serverName: domain) : nil
            try EjabberdServer.configuration(
                domain: domain, port: port, apiPort: apiPort, certificates: certificates, profile: profile,
                sharedRosters: sharedRosters
            ).write(to: directory.appendingPathComponent("ejabberd.yml"), atomically: true, encoding: .utf8)
            let launch = Launch(
                node: "presencetest\(UInt32.random(in: 0 ... .max))@localhost",
                distribution: distribution ?? .standalone(port: freeLoopbackPort()), directory: directory)
            if let process = try ServerProcess.start(
                launch: { try launch.start() },
                waitUntilReady: { EjabberdServer.waitUntilReady(port: port, apiPort: apiPort, process: $0) })
            {
                self.port = port
                self.apiPort = apiPort
                self.directory = directory
                self.certificates = certificates
                self.launch = launch
                self.process = process
                try setUp(accounts: accounts, groups: groups)
                return
            }
            let log = (try? String(contentsOf: directory.appendingPathComponent("ejabberd.log"), encoding: .utf8)) ?? ""
            lastError = "on 127.0.0.1:\(port) (HTTP API \(apiPort)); its log ends:\n\(log.suffix(2000))"
            try? FileManager.default.removeItem(at: directory)
        }
        throw Failure(description: "ejabberd did not get ready within \(TestDeadline.serverReady) \(lastError)")
    }

    private func setUp(accounts: [String: String], groups: [String: [String]]) throws {
        for (user, password) in accounts.sorted(by: { $0.key < $1.key }) { try register(user, password: password) }
        for (group, members) in groups.sorted(by: { $0.key < $1.key }) {
            try api("srg_create", ["group": group, "host": domain, "label": group, "description": "", "display": group])
            for member in members {
                try api("srg_user_add", ["user": member, "host": domain, "group": group, "grouphost": domain])
            }
        }
    }

    package func register(_ user: String, password: String) throws {
        try api("register", ["user": user, "host": domain, "password": password])
    }

    /// Calls one command of ejabberd's HTTP API and checks that it succeeded.
    @discardableResult
    package func api(_ command: String, _ arguments: [String: String]) throws -> String {
        let (status, body) = try TestHTTP.post(
            port: apiPort, path: "/api/\(command)", json: EjabberdServer.json(arguments))
        guard status == 200 else {
            throw Failure(description: "ejabberd API \(command) answered \(status): \(body)")
        }
        return body
    }

    /// Kills the node at once, as a crash would, after writing its tables to disk (what an ejabberd that has run
    /// for a while has done long since): the sessions are cut without a stream close, the accounts survive.
    package func kill() async {
        await onAThreadOfItsOwn {
            if self.process.isRunning { self.syncTables() }
            self.process.kill()
        }
    }

    /// Kills the node at once (SIGKILL), writing nothing first: a node of a cluster, whose tables the other node
    /// holds too, crashing.
    package func crash() async {
        await onAThreadOfItsOwn { self.process.kill() }
    }

    /// Writes Mnesia's tables to disk, through a hidden Erlang node that reaches this one over its distribution
    /// port (a quarter of a second).
    private func syncTables() {
        let script = """
            N = '\(launch.node)',
            Tables = rpc:call(N, mnesia, system_info, [tables]),
            [rpc:call(N, dets, sync, [T]) || T <- Tables, rpc:call(N, mnesia, table_info, [T, storage_type]) == disc_only_copies],
            rpc:call(N, mnesia, dump_log, []),
            halt().
            """
        var environment = launch.environment
        let reach = launch.distribution.apply(to: &environment)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/erl")
        process.arguments =
            ["-sname", "presencectl\(UInt32.random(in: 0 ... .max))@localhost"] + reach + [
                "-dist_listen", "false", "-hidden", "-noinput", "-eval", script,
            ]
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return }
        process.waitUntilExit()
    }

    package func pause() { process.pause() }

    package func resume() { process.resume() }

    package func restart() async throws {
        await kill()
        let restarted = try await onAThreadOfItsOwn { try self.process.restart(attempts: 20, pausing: 0.2) }
        guard restarted else { throw Failure(description: "ejabberd did not restart on port \(port)") }
    }

    package func stop() {
        process.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }

    private static func configuration(
        domain: String, port: Int, apiPort: Int, certificates: TestCertificateAuthority?, profile: ServerProfile,
        sharedRosters: OpenLDAPDirectory?
    ) throws -> String {
        let listenerShaper = profile == .unshaped ? nil : try ServerProfile.ejabberdListenerShaper()
        var lines = [
            "hosts:", "  - \"\(domain)\"",
            "loglevel: info",
            "log_rotate_count: 0",
            "auth_method: internal",
            // SCRAM hashes only on disk; the server offers SCRAM-SHA-1 (its default hash), as a deployment does.
            "auth_password_format: scram",
            "listen:",
            "  -",
            "    port: \(port)",
            "    ip: \"127.0.0.1\"",
            "    module: ejabberd_c2s",
            "    max_stanza_size: 1048576",
            "    starttls_required: \(certificates != nil)",
        ] + (listenerShaper.map { ["    \($0)"] } ?? []) + [
            "  -",
            "    port: \(apiPort)",
            "    ip: \"127.0.0.1\"",
            "    module: ejabberd_http",
            "    request_handlers:",
            "      /api: mod_http_api",
            "api_permissions:",
            "  \"loopback administration\":",
            "    who:",
            "      ip: 127.0.0.1/8",
            "    what:",
            "      - \"*\"",
            // Only the account the Deploying guide's grant names may list the sessions.
            "      - \"!connected_users_vhost\"",
            sessionsGrant(watcher: "watcher@\(domain)"),
            "access_rules:",
            "  local:",
            "    allow: all",
            "  c2s:",
            "    allow: all",
        ]
        lines += try limits(profile, domain: domain)
        let ldap = sharedRosters?.ejabberdConfiguration()
        if let ldap { lines.append(ldap.topLevel) }
        lines += [
            "modules:",
            "  mod_admin_extra: {}",
            "  mod_disco: {}",
            "  mod_http_api: {}",
            "  mod_last: {}",
            "  mod_ping: {}",
            "  mod_roster: {}",
            ldap.map { "  mod_shared_roster_ldap: \($0.module)" } ?? "  mod_shared_roster: {}",
            "  mod_time: {}",
        ]
        if let certificates {
            lines += [
                "certfiles:",
                "  - \"\(certificates.serverCertificate.path)\"",
                "  - \"\(certificates.serverKey.path)\"",
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }


    /// The `acl`, `shaper` and `shaper_rules` sections for `profile`: the shipped ones, read from the installed
    /// package's configuration, with the Deploying guide's exemption for a watcher account when asked.
    private static func limits(_ profile: ServerProfile, domain: String) throws -> [String] {
        switch profile {
        case .unshaped:
            return ["shaper_rules:", "  max_user_sessions: 10", "  c2s_shaper: none"]
        case .stock:
            return try ["acl", "shaper", "shaper_rules"].map(ServerProfile.ejabberdSection)
        case .stockExempting(let watcher):
            let acl = try ServerProfile.ejabberdSection("acl") + "\n" + exemptionACL(watcher: "\(watcher)@\(domain)")
            // The shipped `c2s_shaper` rule, replaced by the guide's.
            var rules: [Substring] = []
            var skipping = false
            for line in try ServerProfile.ejabberdSection("shaper_rules").split(separator: "\n") {
                if line.hasPrefix("  c2s_shaper:") {
                    skipping = true
                    continue
                }
                if skipping && line.hasPrefix("   ") { continue }
                skipping = false
                rules.append(line)
            }
            return [acl, try ServerProfile.ejabberdSection("shaper"), rules.joined(separator: "\n"), exemptionRule]
        }
    }

    /// The Deploying guide's grant of the one API command the watcher's `--xmpp-sessions-api` asks (under
    /// `api_permissions:`).
    package static func sessionsGrant(watcher: String) -> String {
        """
          "presence watcher sessions":
            who:
              user: "\(watcher)"
            what:
              - connected_users_vhost
        """
    }

    /// The Deploying guide's ACL for the watcher account (under `acl:`).
    package static func exemptionACL(watcher: String) -> String {
        """
          presence_watcher:
            user:
              - "\(watcher)"
        """
    }

    /// The Deploying guide's `c2s_shaper` rule (under `shaper_rules:`): no shaper for administrators and the
    /// watcher, the shipped `normal` for everyone else.
    package static let exemptionRule = """
          c2s_shaper:
            - none: admin
            - none: presence_watcher
            - normal
        """

    /// Ready when the node itself listens on the c2s and API ports and the API answers (it has started every
    /// module).
    private static func waitUntilReady(port: Int, apiPort: Int, process: Process) -> Bool {
        let deadline = ContinuousClock.now + TestDeadline.serverReady
        guard ListeningPort.waitUntilHeld([port, apiPort], by: process, timeout: TestDeadline.serverReady) else { return false }
        while process.isRunning && ContinuousClock.now < deadline {
            if let (status, _) = try? TestHTTP.post(port: apiPort, path: "/api/status", json: "{}"), status == 200 {
                return true
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    private static func json(_ arguments: [String: String]) -> String {
        let data = try! JSONSerialization.data(withJSONObject: arguments, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

}
