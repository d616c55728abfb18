// What the periodic resync and the keep-alive cost the XMPP server: a watcher with the service's defaults on a
// real Prosody or ejabberd whose roster holds N members, a share of them online, idle otherwise.
//
//   swift run --package-path Benchmarks -c release ResyncCost [members] [online %] [server] [resync interval s] \
//       [available|all]
//
// It reports the server's CPU with nobody changing status, first before the first resync (the keep-alive alone:
// one ping per 10 s of silence), then over whole resync cycles, with the probes a second the resync sent, how
// long one pass took, and the bound it gives on how long a status the server forgot stays shown; last, the
// keep-alive's pings while the online members change status ten times a second between them (a busy server).
import Foundation
import LoadSupport
import PresenceModel
import PresenceSource
import PresenceStore
import Synchronization
import XMPPClient
import XMPPStream

let arguments = Array(CommandLine.arguments.dropFirst())
let memberCount = arguments.first.flatMap { Int($0) } ?? 1000
let onlinePercent = arguments.dropFirst().first.flatMap { Double($0) } ?? 5
let serverKind = arguments.dropFirst(2).first ?? "prosody"
let intervalSeconds = arguments.dropFirst(3).first.flatMap { Double($0) } ?? seconds(ResyncConfiguration.defaultInterval)
let asked = arguments.dropFirst(4).first.flatMap { ResyncConfiguration.Members(rawValue: $0) } ?? .available
let onlineCount = Int((Double(memberCount) * onlinePercent / 100).rounded())

let server = try startLoadServer(serverKind, members: memberCount)
report("\(server.name): \(memberCount) members, \(onlineCount) online; resync every \(intervalSeconds) s asking \(asked)")

// MARK: Members online, idle

let busyGate = Gate()
let changing = Atomic<Bool>(true)
let members = OnlineMembers(onlineCount, on: server) { index, session in
    await busyGate.wait()
    // Ten changes a second in all, spread evenly over the online members: each changes every onlineCount / 10
    // seconds, starting index / 10 seconds in.
    var round = 0
    try await Task.sleep(for: .milliseconds(100 * index))
    while changing.load(ordering: .relaxed) {
        round += 1
        var writer = XMPPWriter()
        writer.presence(show: round % 2 == 0 ? "away" : "dnd", status: "Change \(round)", priority: 1)
        try await session.send(writer.bytes)
        try await Task.sleep(for: .milliseconds(100 * onlineCount))
    }
}
report(await members.waitUntilOnline())

// MARK: The watcher, with the service's defaults but the resync's interval

let resync = ResyncConfiguration(interval: .milliseconds(Int64(intervalSeconds * 1000)), members: asked)
let source = XMPPPresenceSource(
    configuration: XMPPClientConfiguration(
        account: try BareJID("watcher@\(server.domain)"), password: LoadAccounts.password, resource: "presence",
        host: "127.0.0.1", port: server.port, tls: .off),
    storage: DictionaryMemoryStorage(), resync: resync)
let started = ContinuousClock.now
let sourceTask = Task { await source.run() }
while !source.status.snapshotComplete { try await Task.sleep(for: .milliseconds(5)) }
report("snapshot complete \(ContinuousClock.now - started) after login")

// Before the first resync: the keep-alive alone.
let quietWindow = max(1, intervalSeconds - 2)
try await Task.sleep(for: .seconds(1))
var cpu = server.cpuSeconds()
var pings = source.status.keepAlivePings
var start = ContinuousClock.now
try await Task.sleep(for: .seconds(quietWindow - 1))
var window = seconds(ContinuousClock.now - start)
report(
    String(
        format: "idle, keep-alive only: server CPU %.2f%%, %.1f pings a minute over %.0f s",
        (server.cpuSeconds() - cpu) / window * 100, Double(source.status.keepAlivePings - pings) / window * 60,
        window))

// Whole resync cycles: from the end of one resync to the end of the third after it.
while source.status.resyncs < 1 { try await Task.sleep(for: .milliseconds(5)) }
let before = source.status
cpu = server.cpuSeconds()
pings = before.keepAlivePings
start = ContinuousClock.now
while source.status.resyncs < before.resyncs + 3 { try await Task.sleep(for: .milliseconds(5)) }
window = seconds(ContinuousClock.now - start)
let after = source.status
let probed = after.resyncProbed - before.resyncProbed
let pass = after.lastResyncDuration ?? .zero
report(
    String(
        format:
            "with the resync: server CPU %.2f%%, %.2f probes a second (%d a resync), %.1f pings a minute, over %.0f s",
        (server.cpuSeconds() - cpu) / window * 100, Double(probed) / window, probed / 3,
        Double(after.keepAlivePings - pings) / window * 60, window))
report(
    "one pass: \(pass); a forgotten status is shown at most about \(resync.interval + pass * 2) "
        + "(interval + two passes), corrected \(after.resyncCorrected)")

// A busy server: changes reach the watcher all the time, so the keep-alive has no silence to ping in.
busyGate.open()
try await Task.sleep(for: .seconds(1))
pings = source.status.keepAlivePings
let received = source.status.presencesReceived
start = ContinuousClock.now
try await Task.sleep(for: .seconds(60))
window = seconds(ContinuousClock.now - start)
report(
    String(
        format: "busy, %.1f changes a second: %.1f pings a minute over %.0f s",
        Double(source.status.presencesReceived - received) / window,
        Double(source.status.keepAlivePings - pings) / window * 60, window))
changing.store(false, ordering: .relaxed)

members.end()
sourceTask.cancel()
server.stop()
