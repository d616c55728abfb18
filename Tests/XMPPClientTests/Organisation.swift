import Foundation
import Logging
import PresenceModel
import PresenceSource
import PresenceStore
import PresenceTestSupport
import XMPPClient

/// A real XMPP server (Prosody or ejabberd) with a watcher and members in one shared roster group, as the README
/// tells an operator to set up, and a storage the watcher source fills.
final class Organisation: Sendable {
    static let password = "s3cret pass"
    let server: any XMPPTestServer
    let storage: any MemoryStorage
    let source: XMPPPresenceSource
    private let task = Locked<Task<Void, Never>?>(nil)

    /// - Parameters:
    ///   - rosterOnly: more people in the group who have no account (nobody logs in as them).
    ///   - storage: where the watcher keeps statuses (an evicting one for the refill tests).
    ///   - resync: none unless the test is about it: a resync's probes, due 30 s after login by default, would
    ///     answer for members a test asks about itself when a loaded machine takes that long.
    convenience init(
        on kind: XMPPServerKind, members: [String], outsiders: [String] = [], rosterOnly: [String] = [],
        watcherPassword: String = Organisation.password, storage: any MemoryStorage = DictionaryMemoryStorage(),
        answering: XMPPPresenceSource.AnswerConfiguration = .init(), resync: ResyncConfiguration? = nil
    ) async throws {
        var accounts = Dictionary(uniqueKeysWithValues: (members + outsiders).map { ($0, Organisation.password) })
        accounts["watcher"] = Organisation.password
        let server = try await kind.start(accounts: accounts, groups: ["Staff": ["watcher"] + members + rosterOnly])
        try self.init(
            server: server, watcherPassword: watcherPassword, storage: storage, answering: answering, resync: resync)
    }

    /// Every account in one group of everyone (ejabberd's `@all@`, displayed to itself), as a small organisation
    /// sets it up; the watcher asks the server's sessions API as `sessionsAPIAccount` when given.
    convenience init(everyoneOn kind: XMPPServerKind, members: [String], sessionsAPIAccount: String?) async throws {
        var accounts = Dictionary(uniqueKeysWithValues: members.map { ($0, Organisation.password) })
        accounts["watcher"] = Organisation.password
        let group = kind == .ejabberd ? ["@all@"] : ["watcher"] + members
        let server = try await kind.start(accounts: accounts, groups: ["Everyone": group])
        try self.init(server: server, sessionsAPIAccount: sessionsAPIAccount)
    }

    /// Watches as `watcher` on a server the test set up itself.
    init(
        server: any XMPPTestServer, watcherPassword: String = Organisation.password,
        storage: any MemoryStorage = DictionaryMemoryStorage(),
        answering: XMPPPresenceSource.AnswerConfiguration = .init(), resync: ResyncConfiguration? = nil,
        sessionsAPIAccount: String? = nil
    ) throws {
        self.server = server
        self.storage = storage
        func client(_ user: String, password: String) throws -> XMPPClientConfiguration {
            XMPPClientConfiguration(
                account: try BareJID("\(user)@\(server.domain)"), password: password, resource: "presence",
                host: "127.0.0.1", port: server.port, keepAlive: KeepAlive(interval: .seconds(2), timeout: .seconds(2)))
        }
        let directory = try sessionsAPIAccount.flatMap { account in
            try server.sessionsAPI.map { endpoint in
                try EjabberdSessionDirectory(
                    endpoint: endpoint, client: client(account, password: Organisation.password),
                    maximumAnswerBytes: 1 << 20)
            }
        }
        source = XMPPPresenceSource(
            configuration: try client("watcher", password: watcherPassword), storage: storage,
            backoff: ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(30)), answering: answering,
            resync: resync, sessionDirectory: directory, logger: Logger(label: "test.watcher"))
    }

    var endpoint: XMPPEndpoint { server.endpoint }

    func member(_ user: String, resource: String = "desk") async throws -> MemberClient {
        try await MemberClient(user, password: Organisation.password, resource: resource, server: endpoint)
    }

    func startWatching() {
        let source = source
        task.withLock { $0 = Task { await source.run() } }
    }

    func stop() {
        task.withLock { $0?.cancel() }
        server.stop()
    }

    func bare(_ user: String) -> BareJID { jid("\(user)@\(server.domain)") }

    func presence(of user: String) -> StoredPresence { storage.lookup(jid("\(user)@\(server.domain)")) }

    func state(of user: String) -> PresenceState {
        switch presence(of: user) {
        case .present(let value): value.status?.isAvailable == true ? .available : .offline
        case .lost: .lost
        case .unknown: .unknown
        }
    }

    func shown(_ user: String) -> ResourcePresence? { presence(of: user).presence?.status?.presence }

    func snapshotComplete() async throws -> Bool {
        // Generous: under ThreadSanitizer, with other suites starting their own Prosody, the watcher's task and
        // its SCRAM login can wait seconds for a thread, and a roster has taken 41 s to arrive (the connection then
        // judged dead and made again). It returns as soon as the snapshot is complete.
        try await eventually(timeout: TestDeadline.serverCycle) {
            source.status.snapshotComplete
        }
    }
}
