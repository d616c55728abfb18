import PresenceModel
import Synchronization
import XMPPClient
import XMPPStream

/// Members of a load server online: real client sessions, logged in in waves of 64 (an organisation's morning is
/// spread out, and a server's SCRAM work is per login), each sending an available presence, then doing what the
/// benchmark asks of it until ``end()``.
public final class OnlineMembers: Sendable {
    /// How the logins went, shared with the members' tasks.
    private final class Progress: Sendable {
        let loggedIn = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let firstFailure = Mutex<String?>(nil)
    }

    private let progress = Progress()
    private let endGate = Gate()
    private let task: Task<Void, Never>
    public let count: Int

    /// - Parameters:
    ///   - whileOnline: what member `index` does once online (nothing by default); the session stays open until
    ///     ``end()`` after it returns.
    public init(
        _ count: Int, on server: any LoadServer,
        whileOnline: @escaping @Sendable (_ index: Int, _ session: XMPPSession) async throws -> Void = { _, _ in }
    ) {
        self.count = count
        let (progress, endGate) = (progress, endGate)
        let domain = server.domain
        let port = server.port
        task = Task {
            await withTaskGroup(of: Void.self) { group in
                for index in 0 ..< count {
                    if index % 64 == 0 {
                        while progress.loggedIn.load(ordering: .relaxed) + progress.failures.load(ordering: .relaxed)
                            < index
                        {
                            try? await Task.sleep(for: .milliseconds(5))
                        }
                    }
                    group.addTask {
                        let configuration = XMPPClientConfiguration(
                            account: try! BareJID("\(LoadAccounts.member(index))@\(domain)"),
                            password: LoadAccounts.password, resource: "desk", host: "127.0.0.1", port: port,
                            tls: .off, keepAlive: nil)
                        do {
                            try await XMPPConnection.withSession(configuration) { session in
                                var writer = XMPPWriter()
                                writer.presence(show: "away", status: "Member \(index)", priority: 1)
                                try await session.send(writer.bytes)
                                progress.loggedIn.add(1, ordering: .relaxed)
                                try await whileOnline(index, session)
                                await endGate.wait()
                            }
                        } catch {
                            progress.failures.add(1, ordering: .relaxed)
                            progress.firstFailure.withLock { $0 = $0 ?? "\(error)" }
                        }
                    }
                }
            }
        }
    }

    /// Waits until every member has logged in or failed to; returns a line that says how it went.
    public func waitUntilOnline() async -> String {
        let progress = progress
        while progress.loggedIn.load(ordering: .relaxed) + progress.failures.load(ordering: .relaxed) < count {
            try? await Task.sleep(for: .milliseconds(50))
        }
        return "members online: \(progress.loggedIn.load(ordering: .relaxed)), failed: "
            + "\(progress.failures.load(ordering: .relaxed))"
            + (progress.firstFailure.withLock { $0 }.map { " (first: \($0))" } ?? "")
    }

    /// How many members are logged in now.
    public var onlineNow: Int { progress.loggedIn.load(ordering: .relaxed) }

    /// Ends every member's session.
    public func end() {
        endGate.open()
        task.cancel()
    }
}
