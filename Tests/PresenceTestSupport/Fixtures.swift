import AsyncHTTPClient
import PresenceStore

/// A bare JID from a literal the test knows is valid.
package func jid(_ string: String) -> BareJID { try! BareJID(string) }

/// A fixed moment plus `seconds`, so that tests never depend on the clock.
package func time(_ seconds: Int64) -> PresenceTime { PresenceTime(secondsSinceEpoch: 1_795_400_000 + seconds) }

package func available(
    _ full: String, priority: Int8 = 0, show: PresenceShow? = nil, status: String? = nil,
    attendance: Attendance? = nil, delayedAt: PresenceTime? = nil
) -> PresenceUpdate {
    PresenceUpdate(
        from: try! JID(full), availability: .available,
        details: PresenceDetails(show: show, status: status, priority: priority, attendance: attendance),
        delayedAt: delayedAt)
}

package func unavailable(_ full: String, status: String? = nil, attendance: Attendance? = nil) -> PresenceUpdate {
    PresenceUpdate(
        from: try! JID(full), availability: .unavailable,
        details: PresenceDetails(status: status, attendance: attendance))
}

/// A user after `updates`, applied one second apart.
package func user(_ updates: PresenceUpdate...) -> UserPresence {
    var value = UserPresence()
    for (index, update) in updates.enumerated() { value.apply(update, receivedAt: time(Int64(index))) }
    return value
}

/// Collects what observers report, from any thread.
package final class Recorder<Element: Sendable>: Sendable {
    private let elements = Locked<[Element]>([])

    package init() {}

    package func append(_ element: Element) { elements.withLock { $0.append(element) } }
    package var all: [Element] { elements.current }
    package func removeAll() { elements.withLock { $0.removeAll() } }
}

/// A clock tests move by hand, in milliseconds.
package final class ManualClock: Sendable {
    private let value = Locked<Int64>(1_000_000)

    package init() {}

    package var milliseconds: Int64 { value.current }
    package func advance(by milliseconds: Int64) { value.withLock { $0 += milliseconds } }
}

/// Waits until `condition` holds, checking every 20 ms; whether it held before `timeout`.
///
/// A check whose HTTP answer was too slow to come (async-http-client's read timeout or deadline: a service on a
/// machine loaded by the whole suite under ThreadSanitizer) is a check that did not hold yet, asked again while
/// there is time; any other error ends the wait.
package func eventually(
    timeout: Duration = TestDeadline.condition, _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        do {
            if try await condition() { return true }
        } catch let error as HTTPClientError where error == .readTimeout || error == .deadlineExceeded {
            guard ContinuousClock.now < deadline else { throw error }
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}
