// The XMPP source against a real Prosody or ejabberd on loopback: how long the watcher takes to know everyone's status
// (the roster snapshot) for N members, and how many presence changes per second it applies while members keep
// changing, next to what Prosody itself routes on the same machine.
//
//   swift run --package-path Benchmarks -c release XMPPSourceLoad [members] [changers] [seconds] [server]
//
// Members are real client sessions of this package's connection (SCRAM over loopback, one per account); the
// watcher is `XMPPPresenceSource` with a dictionary storage, as `presence serve --xmpp-jid` runs it. The server
// (`prosody`, the default, or `ejabberd`) shares every member with the watcher and the watcher with every member,
// and no member with another (`LoadServer`).
import Foundation
import PresenceModel
import PresenceSource
import PresenceStore
import LoadSupport
import Synchronization
import XMPPClient
import XMPPStream

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let memberCount = arguments.first ?? 1000
let changerCount = min(arguments.dropFirst().first ?? 100, memberCount)
let windowSeconds = arguments.dropFirst(2).first ?? 10

// MARK: A server of our own

let serverKind = CommandLine.arguments.dropFirst(4).first ?? "prosody"
let prosody = try startLoadServer(serverKind, members: memberCount)
let domain = prosody.domain
let port = prosody.port
func member(_ index: Int) -> String { LoadAccounts.member(index) }
func prosodyCPUSeconds() -> Double { prosody.cpuSeconds() }

// MARK: Members

let loggedIn = Atomic<Int>(0)
let loginFailures = Atomic<Int>(0)
let sent = Atomic<Int>(0)
let changeGate = Gate()
let stopChanging = Atomic<Bool>(false)
/// Each changer's pause between two presences, in nanoseconds: changers × (1 s / pause) is the offered rate.
let changeInterval = Atomic<Int>(1_000_000_000)
let ending = Atomic<Bool>(false)
let paused = Atomic<Bool>(false)
let endGate = Gate()
let shows = ["away", "chat", "dnd", "xa"]

func runMember(_ index: Int) async {
    let configuration = XMPPClientConfiguration(
        account: try! BareJID("\(member(index))@\(domain)"), password: "pw", resource: "load", host: "127.0.0.1",
        port: port, tls: .off, keepAlive: nil)
    do {
        try await XMPPConnection.withSession(configuration) { session in
            var writer = XMPPWriter()
            writer.presence(show: shows[index % 4], status: "Member \(index) at work", priority: 1)
            try await session.send(writer.bytes)
            loggedIn.add(1, ordering: .relaxed)
            guard index < changerCount else {
                await endGate.wait()
                return
            }
            await changeGate.wait()
            var round = 0
            var next = ContinuousClock.now
            while !stopChanging.load(ordering: .relaxed) {
                if paused.load(ordering: .relaxed) {
                    try await Task.sleep(for: .milliseconds(10))
                    next = .now
                    continue
                }
                round += 1
                var writer = XMPPWriter()
                writer.presence(show: shows[round % 4], status: "Change \(round)", priority: 1)
                try await session.send(writer.bytes)
                sent.add(1, ordering: .relaxed)
                next += .nanoseconds(changeInterval.load(ordering: .relaxed))
                if next < .now { next = .now }
                try await Task.sleep(until: next)
            }
            await endGate.wait()
        }
    } catch {
        guard !ending.load(ordering: .relaxed) else { return }
        loginFailures.add(1, ordering: .relaxed)
        if loginFailures.load(ordering: .relaxed) <= 3 { report("member \(index): \(error)") }
    }
}

let loginStart = ContinuousClock.now
let memberTasks = Task {
    await withTaskGroup(of: Void.self) { group in
        // Logins in waves of 64, as a real organisation's morning is spread out.
        var next = 0
        while next < memberCount {
            let wave = min(64, memberCount - next)
            for index in next ..< next + wave { group.addTask { await runMember(index) } }
            next += wave
            while loggedIn.load(ordering: .relaxed) + loginFailures.load(ordering: .relaxed) < next {
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        await group.waitForAll()
    }
}
while loggedIn.load(ordering: .relaxed) + loginFailures.load(ordering: .relaxed) < memberCount {
    try await Task.sleep(for: .milliseconds(50))
}
let loginTime = ContinuousClock.now - loginStart
report("members logged in: \(loggedIn.load(ordering: .relaxed)) of \(memberCount) in \(loginTime)")

// MARK: The watcher's snapshot

let storage = DictionaryMemoryStorage()
let source = XMPPPresenceSource(
    configuration: XMPPClientConfiguration(
        account: try BareJID("watcher@\(domain)"), password: "pw", resource: "presence", host: "127.0.0.1", port: port,
        tls: .off),
    // No periodic resync: its probes would mix with the changes measured; ResyncCost measures them on their own.
    storage: storage, resync: nil)
let watchStart = ContinuousClock.now
let sourceTask = Task { await source.run() }
while !source.status.snapshotComplete { try await Task.sleep(for: .milliseconds(2)) }
let watchTime = ContinuousClock.now - watchStart
let available = storage.keys.filter { storage.get($0)?.status?.isAvailable == true }.count
report(
    "snapshot: roster \(source.status.rosterSize), \(available) available in storage; "
        + "login to complete snapshot \(watchTime), initial presence to complete snapshot "
        + "\(source.status.lastSnapshotDuration ?? .zero)")

// MARK: Sustained changes, at rising offered rates

/// Changes applied since the snapshot (the snapshot's own presences are not changes).
let snapshotPresences = source.status.presencesReceived
func appliedChanges() -> Int { source.status.presencesReceived - snapshotPresences }

report("offered/s  sent/s  applied/s  backlog  drained in  \(prosody.name) CPU  this process CPU")
changeGate.open()
for rate in [1_000, 2_000, 5_000, 10_000, 20_000, 40_000] {
    changeInterval.store(1_000_000_000 * changerCount / rate, ordering: .relaxed)
    paused.store(false, ordering: .relaxed)
    try await Task.sleep(for: .milliseconds(500))  // settle at the new rate
    let sentBefore = sent.load(ordering: .relaxed)
    let receivedBefore = appliedChanges()
    let prosodyBefore = prosodyCPUSeconds()
    let ownBefore = ownCPUSeconds()
    let start = ContinuousClock.now
    try await Task.sleep(for: .seconds(windowSeconds))
    let window = seconds(ContinuousClock.now - start)
    let sentInWindow = sent.load(ordering: .relaxed) - sentBefore
    let appliedInWindow = appliedChanges() - receivedBefore
    let prosodyCPU = prosodyCPUSeconds() - prosodyBefore
    let ownCPU = ownCPUSeconds() - ownBefore
    // Pause the changers and measure how long the watcher needs to apply what is still in flight.
    let backlog = sent.load(ordering: .relaxed) - appliedChanges()
    paused.store(true, ordering: .relaxed)
    try await Task.sleep(for: .milliseconds(20))
    let drainStart = ContinuousClock.now
    while appliedChanges() < sent.load(ordering: .relaxed),
        ContinuousClock.now - drainStart < .seconds(60)
    {
        try await Task.sleep(for: .milliseconds(5))
    }
    let drained = seconds(ContinuousClock.now - drainStart)
    report(
        String(
            format: "%9d  %6.0f  %9.0f  %7d  %8.2f s  %10.0f%%  %15.0f%%", rate, Double(sentInWindow) / window,
            Double(appliedInWindow) / window, backlog, drained, prosodyCPU / window * 100, ownCPU / window * 100))
    if drained >= 60 { break }
}
stopChanging.store(true, ordering: .relaxed)
try await Task.sleep(for: .milliseconds(100))
let totalSent = sent.load(ordering: .relaxed)
let finalDrain = ContinuousClock.now
while appliedChanges() < totalSent, ContinuousClock.now - finalDrain < .seconds(60) {
    try await Task.sleep(for: .milliseconds(5))
}
let totalApplied = appliedChanges()
report("all changes: sent \(totalSent), applied \(totalApplied) (every change reaches the storage when equal)")
ending.store(true, ordering: .relaxed)
endGate.open()
sourceTask.cancel()
memberTasks.cancel()
prosody.stop()
