import PresenceStore

/// One user's answer as the command line (`presence query --format json`) and the HTTP API (`/v1/presence`)
/// give it.
///
/// A field with no value is written as `null`, never left out: scripts read every field of every result.
public struct PresenceQueryResult: Hashable, Sendable, Decodable, JSONDocument {
    public var jid: String
    /// `available`, `offline` (a known state with its time), `unknown` (never seen) or `lost` (the storage
    /// dropped it).
    public var state: PresenceState
    /// `chat`, `away`, `xa` or `dnd`; null for plain available and for users not available.
    public var show: PresenceShow?
    public var status: String?
    public var priority: Int?
    public var resource: String?
    public var attendance: Attendance?
    /// XEP-0082 UTC time since when this state holds.
    public var since: String?
    /// For `lost`: the removal cause, when the storage knows it.
    public var cause: RemovalCause?
    /// Whether the answer is current: true while the service's XMPP source is connected and its snapshot
    /// complete, false while it is down (the answer is as of the drop); null without an XMPP source (the command
    /// line, a service fed only through its feed port).
    public var live: Bool?
    /// Where the answer came from: `storage` (memory), `disk` (the disk tier, memory having dropped the user),
    /// `probe` (the presence server, asked just now), or `none` when nothing could be had (`lost`, `unknown`).
    public var origin: AnswerOrigin
    /// Why the presence server was not asked, or did not answer, when the lookup policy wanted it:
    /// `not-a-member`, `not-connected`, `rate-limited` or `timeout`.
    public var probeFailure: ProbeFailure?
    /// True when the stored answer was rebuilt after a loss from one resource's presence and the server has not
    /// confirmed it since: the user may have other resources it does not show.
    public var partial = false
    /// For a status restored from the disk tier at start and neither updated nor confirmed since: the XEP-0082
    /// UTC time it was current as of (the previous process's last write). Such an answer is not live.
    public var asOf: String?

    /// A lookup's answer.
    public init(_ answer: LookupAnswer, live: Bool? = nil) {
        self.init(jid: answer.jid, stored: answer.stored, live: live)
        origin = answer.origin
        probeFailure = answer.probeFailure
        partial = answer.isPartial
        if let restored = answer.restoredAsOf {
            asOf = restored.description
            self.live = false
        }
    }

    /// The storage's answer, as a `cache-only` lookup gives it.
    public init(jid: BareJID, stored: StoredPresence, live: Bool? = nil) {
        self.jid = jid.rawValue
        self.live = live
        origin = .none
        if case .present = stored { origin = .storage }
        state = .unknown
        switch stored {
        case .present(let presence):
            guard let status = presence.status else { return }
            let shown = status.presence
            if status.isAvailable {
                state = .available
                show = shown.details.show
                priority = Int(shown.details.priority)
            } else {
                state = .offline
            }
            self.status = shown.details.status
            resource = shown.resource.isEmpty ? nil : shown.resource
            attendance = shown.details.attendance
            since = shown.updatedAt.description
        case .lost(let removalCause):
            state = .lost
            cause = removalCause
        case .unknown:
            break
        }
    }

    public func write(to writer: inout JSONWriter) { write(as: .object, to: &writer) }

    /// How an answer is written: as a JSON object of named members (a query's result, a `presence` event), or as
    /// a row of the same members' values in ``columns``' order (a snapshot table's row).
    public enum Layout: Sendable {
        case object
        case row
    }

    /// The members' names in the order both layouts write them: a row's values are these members' values.
    public static let columns = [
        "asOf", "attendance", "cause", "jid", "live", "origin", "partial", "priority", "probeFailure", "resource",
        "show", "since", "state", "status",
    ]

    public func write(as layout: Layout, to writer: inout JSONWriter) {
        PresenceQueryResult.writeMembers(
            as: layout, to: &writer, asOf: asOf, attendance: attendance, cause: cause, jid: jid, live: live,
            origin: origin, partial: partial, priority: priority, probeFailure: probeFailure,
            resource: { $0.string(resource) }, show: show, since: { $0.string(since) }, state: state,
            status: { $0.string(status) })
    }

    /// Writes what `PresenceQueryResult(LookupAnswer(…), live: live)` writes for a storage answer (origin
    /// `storage` for a stored user, `none` otherwise; no probe failure), from the shown resource's bytes in
    /// place: no result and no strings in between.
    public static func write(jid: BareJID, stored: StoredShownPresence, live: Bool?, to writer: inout JSONWriter) {
        func write(_ state: PresenceState, origin: AnswerOrigin, cause: RemovalCause? = nil) {
            writeMembers(
                as: .object, to: &writer, asOf: nil, attendance: nil, cause: cause, jid: jid.rawValue, live: live,
                origin: origin, partial: false, priority: nil, probeFailure: nil, resource: { $0.null() }, show: nil,
                since: { $0.null() }, state: state, status: { $0.null() })
        }
        switch stored {
        case .unknown: write(.unknown, origin: .none)
        case .lost(let cause): write(.lost, origin: .none, cause: cause)
        case .present(nil): write(.unknown, origin: .storage)
        case .present(let shown?):
            writeMembers(
                as: .object, to: &writer, asOf: nil, attendance: shown.attendance, cause: nil, jid: jid.rawValue,
                live: live, origin: .storage, partial: false, priority: shown.isAvailable ? Int(shown.priority) : nil,
                probeFailure: nil,
                resource: { writer in
                    if shown.resource.isEmpty { writer.null() } else { writer.string(utf8: shown.resource) }
                },
                show: shown.isAvailable ? shown.show : nil,
                since: { writer in shown.updatedAt.withUTF8Description { writer.string(utf8: $0) } },
                state: shown.isAvailable ? .available : .offline,
                status: { writer in
                    guard let status = shown.status else { return writer.null() }
                    // A status cut at the storage's limit may end inside a character: repaired as the decoded
                    // string would be.
                    if JSONWriter.isASCII(status) {
                        writer.string(utf8: status)
                    } else {
                        writer.string(String(decoding: status, as: UTF8.self))
                    }
                })
        }
    }

    /// The members in sorted order (``columns``), every one written, null or not, named in an object or in place
    /// in a row: the one place that decides the layout.
    private static func writeMembers(
        as layout: Layout, to writer: inout JSONWriter, asOf: String?, attendance: Attendance?, cause: RemovalCause?,
        jid: String, live: Bool?, origin: AnswerOrigin, partial: Bool, priority: Int?, probeFailure: ProbeFailure?,
        resource: (inout JSONWriter) -> Void, show: PresenceShow?, since: (inout JSONWriter) -> Void,
        state: PresenceState, status: (inout JSONWriter) -> Void
    ) {
        func members(_ writer: inout JSONWriter) {
            /// Starts a member: its name in an object, its place in a row.
            func member(_ name: StaticString) {
                switch layout {
                case .object: writer.key(name)
                case .row: writer.element { _ in }
                }
            }
            member("asOf"); writer.string(asOf)
            member("attendance"); writer.string(attendance?.rawValue)
            member("cause"); writer.string(cause?.rawValue)
            member("jid"); writer.string(jid)
            member("live")
            if let live { writer.bool(live) } else { writer.null() }
            member("origin"); writer.string(origin.rawValue)
            member("partial"); writer.bool(partial)
            member("priority"); writer.int(priority)
            member("probeFailure"); writer.string(probeFailure?.rawValue)
            member("resource"); resource(&writer)
            member("show"); writer.string(show?.rawValue)
            member("since"); since(&writer)
            member("state"); writer.string(state.rawValue)
            member("status"); status(&writer)
        }
        switch layout {
        case .object: writer.object(members)
        case .row: writer.array(writingElements: members)
        }
    }
}

extension PresenceShow: Decodable {}
extension Attendance: Decodable {}
extension RemovalCause: Decodable {}
extension AnswerOrigin: Decodable {}
extension ProbeFailure: Decodable {}
