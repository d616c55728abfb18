import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PresenceSource
import PresenceStore
import PresenceWire

/// The query API's routes: presence by JID, the change stream, badges, the people page, statistics, metrics, the
/// health checks and the document, behind the ``FrontDoorResponder``. Every JSON body is a document of the wire
/// format (`PresenceWire`), written by its one encoder.
enum QueryRoutes {
    static func router(
        endpoint: QueryEndpoint, events: EventStreamEndpoint, admission: RequestAdmission,
        statistics: ServiceStatistics, metrics: ServiceMetrics, source: XMPPPresenceSource?
    ) -> FrontDoorResponder<RouterResponder<ServiceRequestContext>> {
        let hub = events.hub
        let lookup = endpoint.lookup
        let storage = lookup.storage
        let (readiness, secrets) = (admission.readiness, admission.secrets)
        // HEAD is answered by each GET route, without the body (RFC 9110 §9.3.2).
        let router = Router(context: ServiceRequestContext.self, options: .autoGenerateHeadEndpoints)
        // Whether tokens are needed and which limits apply are fixed for the process's life (a reload replaces the
        // tokens, never their being required).
        let document = OpenAPIDocument(
            access: secrets.access, maxBatchJIDs: endpoint.maxBatchJIDs,
            maxJIDsPerStream: hub.configuration.maxJIDsPerStream)
        // Before `/v1/presence/:jid`, which would otherwise take `events` for a JID.
        EventRoutes.add(to: router, endpoint: events)
        PeoplePage.add(to: router)
        router.get("/v1/presence/:jid/badge.svg") { request, context -> Response in
            let jid: BareJID
            switch PercentEncodedTarget.jid(try context.parameters.require("jid")) {
            case .jid(let read): jid = read
            case .malformed(let report): return ServiceAnswer.badRequest(report.condition, report.message).response
            }
            let svg = Array(StatusBadge.svg(for: PresenceQueryResult(jid: jid, stored: storage.lookup(jid))).utf8)
            let tag = EntityTag.of(svg)
            // Statuses change at any moment: caches may keep the badge but must ask again each time, which the
            // ETag makes a 304 when nothing changed.
            var headers: HTTPFields = [.cacheControl: "no-cache", .eTag: tag]
            if EntityTag.isFresh(request, tag: tag) { return Response(status: .notModified, headers: headers) }
            headers[.contentType] = "image/svg+xml; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: svg)))
        }
        // Both query forms: the endpoint reads the target itself, the same way the event-loop path does.
        router.get("/v1/presence/:jid") { request, _ -> Response in await endpoint.respond(to: request.uri.string).response }
        router.get("/v1/presence") { request, _ -> Response in await endpoint.respond(to: request.uri.string).response }
        router.get("/v1/stats") { _, _ -> Response in
            var stats = ServiceStats(storage: storage, statistics: statistics, source: source)
            let streams = hub.counts
            stats.eventStreams = streams.open
            stats.eventStreamsClosedAsStalled = streams.closedAsStalled
            if lookup.prober != nil {
                stats.probes = ProbeReport(
                    lookup.statistics, defaultPolicy: lookup.defaultPolicy, configuration: lookup.configuration)
            }
            return json(stats)
        }
        router.get("/metrics") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(
                    byteBuffer: ByteBuffer(
                        bytes: metrics.exposition(
                            storage: storage, statistics: statistics, source: source?.status,
                            probes: lookup.prober == nil ? nil : lookup.statistics, streams: hub.counts,
                            ready: readiness.current.isReady)))
            )
        }
        router.get("/openapi.yaml") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: document.bytes)))
        }
        router.get("/healthz") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        // Readiness for a balancer or an orchestrator: 200 while this replica serves a complete, live picture,
        // 503 with the reason otherwise. `/healthz` stays the liveness check: the process answers.
        router.get("/readyz") { _, _ -> Response in
            let now = readiness.current
            // Open to anyone even when the API needs a token: then the reason names no host and quotes no error
            // (the source's last error is in /v1/stats and the log).
            let reason = secrets.access.requiresToken ? now.reason : now.explanation
            return json(
                ReadinessReport(ready: now.isReady, reason: reason, instance: hub.instance),
                status: now.isReady ? .ok : .serviceUnavailable)
        }
        // Tokens, readiness and the method rules, before any route.
        return FrontDoorResponder(routes: router.buildResponder(), admission: admission)
    }

    static func json(_ document: some JSONDocument, status: HTTPResponse.Status = .ok) -> Response {
        ServiceAnswer.json(document, status: status).response
    }

}
