import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PresenceSource
import PresenceStore
import PresenceWire

/// The handlers of the routes ``FrontDoor`` hands on (``ServiceResource``): badges, the people page, statistics,
/// metrics, the health checks and the document. One `switch` over the table: a resource added to it does not compile
/// until it has a handler here. Every JSON body is a document of the wire format (`PresenceWire`), written by its
/// one encoder.
struct ResourceResponder: Sendable {
    let storage: any MemoryStorage
    let lookup: PresenceLookup
    let hub: ChangeHub
    let statistics: ServiceStatistics
    let metrics: ServiceMetrics
    let readiness: ReadinessMonitor
    let secrets: ServiceSecrets
    let source: XMPPPresenceSource?

    func respond(to resource: ServiceResource, _ request: Request) -> Response {
        switch resource {
        case .badge: badge(request)
        case .stats: Self.json(stats)
        case .metrics:
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(
                    byteBuffer: ByteBuffer(
                        bytes: metrics.exposition(
                            storage: storage, statistics: statistics, source: source?.status,
                            probes: lookup.prober == nil ? nil : lookup.statistics, streams: hub.counts,
                            ready: readiness.current.isReady))))
        case .healthz:
            Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        case .readyz: ready
        case .openapi: CompiledFile.openAPIDocument.answer(request)
        case .page: CompiledFile.peoplePage.answer(request)
        case .pageScript: CompiledFile.peopleScript.answer(request)
        case .pageStyle: CompiledFile.peopleStyle.answer(request)
        }
    }

    /// `/v1/presence/{jid}/badge.svg`: the person's status as an SVG badge.
    private func badge(_ request: Request) -> Response {
        let path = Substring(request.uri.path)
        let jid: BareJID
        switch PercentEncodedTarget.jid(String(ServiceRoute.resource(.badge).jidSegment(in: path) ?? "")) {
        case .jid(let read): jid = read
        case .malformed(let report): return ServiceAnswer.badRequest(report.condition, report.message).response
        }
        let svg = Array(StatusBadge.svg(for: PresenceQueryResult(jid: jid, stored: storage.lookup(jid))).utf8)
        let tag = EntityTag.of(svg)
        // Statuses change at any moment: caches may keep the badge but must ask again each time, which the ETag makes
        // a 304 when nothing changed.
        var headers: HTTPFields = [.cacheControl: "no-cache", .eTag: tag]
        if EntityTag.isFresh(request, tag: tag) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = "image/svg+xml; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: svg)))
    }

    private var stats: ServiceStats {
        var stats = ServiceStats(storage: storage, statistics: statistics, source: source)
        let streams = hub.counts
        stats.eventStreams = streams.open
        stats.eventStreamsClosedAsStalled = streams.closedAsStalled
        if lookup.prober != nil {
            stats.probes = ProbeReport(
                lookup.statistics, defaultPolicy: lookup.defaultPolicy, configuration: lookup.configuration)
        }
        return stats
    }

    /// Readiness for a balancer or an orchestrator: 200 while this replica serves a complete, live picture, 503 with
    /// the reason otherwise. `/healthz` stays the liveness check: the process answers.
    private var ready: Response {
        let now = readiness.current
        // Open to anyone even when the API needs a token: then the reason names no host and quotes no error (the
        // source's last error is in /v1/stats and the log).
        let reason = secrets.access.requiresToken ? now.reason : now.explanation
        return Self.json(
            ReadinessReport(ready: now.isReady, reason: reason, instance: hub.instance),
            status: now.isReady ? .ok : .serviceUnavailable)
    }

    static func json(_ document: some JSONDocument, status: HTTPResponse.Status = .ok) -> Response {
        ServiceAnswer.json(document, status: status).response
    }
}
