// How long an organisation takes to be ready, from the watcher's login to a complete snapshot, on a real Prosody
// or ejabberd with no client rate limit, with the limits Debian ships, or with those and the Deploying guide's
// exemption for the watcher; with the server's CPU for the snapshot, when the service named a limit, and how long
// stopping took at the worst moment (in the middle of the snapshot's questions).
//
//   swift run --package-path Benchmarks -c release OrganisationReady [members] [online %] [server] \
//       [none|stock|exempt] [seconds to wait at most] [questions in flight at most] [memory|disk] \
//       [named|everyone|directory] [sessions|questions]
//
// The roster design (``RosterDesign``): `named`, the members in a group only the watchers see, `everyone`, one
// group in which everyone sees everyone (`@all@` on ejabberd, one `mod_groups` group on Prosody), or `directory`,
// one such group kept in an OpenLDAP directory (`slapd`) and read by ejabberd's `mod_shared_roster_ldap`. With `sessions`,
// the watcher asks the server's list of sessions (ejabberd's `connected_users_vhost`, `--xmpp-sessions-api`) instead
// of one last-activity question per silent member (`questions`, the default and the plain watcher account's way).
//
// With `disk`, the watcher's storage is the disk tier (a dictionary in front of SQLite), and the snapshot is run
// again on a new tier opened on the same file: a replica's restart, which answers from disk at once.
import Foundation
import LoadSupport
import PresenceDisk
import PresenceModel
import PresenceSource
import PresenceStore
import XMPPClient
import XMPPStream

let arguments = Array(CommandLine.arguments.dropFirst())
let memberCount = arguments.first.flatMap { Int($0) } ?? 1000
let onlinePercent = arguments.dropFirst().first.flatMap { Double($0) } ?? 5
let serverKind = arguments.dropFirst(2).first ?? "ejabberd"
let limits = arguments.dropFirst(3).first.flatMap { ShippedLimits(rawValue: $0) } ?? .none
let waitAtMost = arguments.dropFirst(4).first.flatMap { Double($0) } ?? 120
let questionsInFlight =
    arguments.dropFirst(5).first.flatMap { Int($0) }
    ?? XMPPPresenceSource.AnswerConfiguration.defaultQuestionsInFlight
let onDisk = arguments.dropFirst(6).first == "disk"
let rosterDesign = arguments.dropFirst(7).first.flatMap { RosterDesign(rawValue: $0) } ?? .named
let asksSessions = arguments.dropFirst(8).first == "sessions"
let diskDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("organisation-ready-\(UUID())").path
let onlineCount = Int((Double(memberCount) * onlinePercent / 100).rounded())

let setUp = ContinuousClock.now
let server = try startLoadServer(serverKind, members: memberCount, limits: limits, roster: rosterDesign)
report(
    "\(server.name), limits \(limits.rawValue), roster \(rosterDesign.rawValue), "
        + "\(asksSessions && server.sessionsAPI != nil ? "list of sessions" : "last-activity questions"): "
        + "\(memberCount) members, \(onlineCount) online (set up in "
        + "\(ContinuousClock.now - setUp))")

// Members online, idle, and the server done with their logins (everyone's presence to everyone else online, in
// a group of everyone): the watcher's login is measured on a quiet server.
let members = OnlineMembers(onlineCount, on: server)
report(await members.waitUntilOnline())
let quietSince = ContinuousClock.now
var lastCPU = server.cpuSeconds()
repeat {
    try await Task.sleep(for: .seconds(1))
    let cpu = server.cpuSeconds()
    defer { lastCPU = cpu }
    if cpu - lastCPU < 0.05 { break }
} while ContinuousClock.now - quietSince < .seconds(600)
report(String(format: "the server was quiet %.1f s after the members' logins", seconds(ContinuousClock.now - quietSince)))

/// One watcher with the service's defaults: login to a complete snapshot.
func watch(
    stopAfter: Duration?, storage: any MemoryStorage = DictionaryMemoryStorage()
) async throws -> (ready: Duration?, cpu: Double, named: Duration?, limit: ServerReadLimit?) {
    let client = XMPPClientConfiguration(
        account: try BareJID("watcher@\(server.domain)"), password: LoadAccounts.password, resource: "presence",
        host: "127.0.0.1", port: server.port, tls: .off)
    let directory = try server.sessionsAPI.flatMap { endpoint in
        asksSessions
            ? try EjabberdSessionDirectory(endpoint: endpoint, client: client, maximumAnswerBytes: 32 << 20) : nil
    }
    let source = XMPPPresenceSource(
        configuration: client, storage: storage, answering: .init(questionsInFlight: questionsInFlight),
        sessionDirectory: directory)
    let cpu = server.cpuSeconds()
    let ownCPU = ownCPUSeconds()
    let started = ContinuousClock.now
    let task = Task { await source.run() }
    var named: Duration?
    var limit: ServerReadLimit?
    var rosterAt: Duration?
    var questionsAt: Duration?
    let deadline = started + (stopAfter ?? .milliseconds(Int64(waitAtMost * 1000)))
    while !source.status.snapshotComplete && ContinuousClock.now < deadline {
        let status = source.status
        if rosterAt == nil && status.rosterSize > 0 { rosterAt = ContinuousClock.now - started }
        if questionsAt == nil && status.questionsInFlight > 0 { questionsAt = ContinuousClock.now - started }
        if named == nil, let seen = status.readLimit {
            named = ContinuousClock.now - started
            limit = seen
        }
        try await Task.sleep(for: .milliseconds(5))
    }
    let ready = source.status.snapshotComplete ? ContinuousClock.now - started : nil
    if stopAfter == nil {
        report(
            "roster received \(rosterAt.map { "\(seconds($0))" } ?? "-") s after login, last-activity questions from "
                + "\(questionsAt.map { "\(seconds($0))" } ?? "-") s")
        if ready != nil {
            // What the snapshot says of each member: the online ones (those whose login went through) available,
            // every other offline.
            func shownAvailable(_ index: Int) -> Bool? {
                guard case .present(let presence) = storage.lookup(try! BareJID("\(LoadAccounts.member(index))@\(server.domain)"))
                else { return nil }
                return presence.status?.isAvailable
            }
            let available = (0 ..< memberCount).filter { shownAvailable($0) == true }.count
            let offline = (0 ..< memberCount).filter { shownAvailable($0) == false }.count
            report("shown available: \(available) (\(members.onlineNow) online), offline: \(offline), unknown: "
                + "\(memberCount - available - offline)")
        }
    }
    let used = server.cpuSeconds() - cpu
    if stopAfter == nil { report(String(format: "the watcher's own CPU: %.2f s", ownCPUSeconds() - ownCPU)) }
    let stopping = ContinuousClock.now
    task.cancel()
    await task.value
    if stopAfter != nil { report("stopped \(ContinuousClock.now - stopping) after the stop was asked, mid-snapshot") }
    return (ready, used, named, limit)
}

/// The disk tier on the benchmark's file, and how long opening it took.
func openTier() throws -> (TieredStorage, Duration) {
    let started = ContinuousClock.now
    let tier = try TieredStorage(memory: DictionaryMemoryStorage(), disk: try SQLitePresenceStore(directory: diskDirectory))
    return (tier, ContinuousClock.now - started)
}

let firstTier = onDisk ? try openTier().0 : nil
let run = try await watch(stopAfter: nil, storage: firstTier ?? DictionaryMemoryStorage())
if let ready = run.ready {
    report(String(format: "ready %.2f s after login; server CPU %.2f s", seconds(ready), run.cpu))
} else {
    report(String(format: "not ready after %.0f s; server CPU %.2f s", waitAtMost, run.cpu))
}
if let named = run.named, let limit = run.limit {
    report(String(format: "limit named %.2f s after login: ", seconds(named)) + limit.explanation)
} else {
    report("no limit named")
}
if let firstTier {
    _ = firstTier.flush()
    firstTier.close()
    let (tier, opened) = try openTier()
    report("restart: the disk tier opened in \(opened) with \(tier.count) statuses, answered from disk at once")
    let again = try await watch(stopAfter: nil, storage: tier)
    report(
        String(
            format: "restart: ready %.2f s after login; server CPU %.2f s", again.ready.map(seconds) ?? -1, again.cpu))
    tier.close()
    try? FileManager.default.removeItem(atPath: diskDirectory)
}

// Stopping in the middle of a snapshot: the service's SIGTERM path (the source's task cancelled).
_ = try await watch(stopAfter: .seconds(2))

members.end()
server.stop()
