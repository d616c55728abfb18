import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PresenceSource
import PresenceStore
import PresenceWire

/// The query API: presence by JID, service statistics, Prometheus metrics and a health check. Every JSON body is
/// a document of the wire format (`PresenceWire`), written by its one encoder.
enum QueryRoutes {
    static func router(
        lookup: PresenceLookup, statistics: ServiceStatistics, metrics: ServiceMetrics, source: XMPPPresenceSource?,
        hub: ChangeHub, readiness: ReadinessMonitor, secrets: ServiceSecrets,
        maxBatchJIDs: Int = HTTPLimits.defaultMaxBatchJIDs
    ) -> Router<ServiceRequestContext> {
        let storage = lookup.storage
        let router = Router(context: ServiceRequestContext.self)
        // Before every route: a route added before it would answer without a token.
        if secrets.access.requiresToken { router.add(middleware: BearerTokenMiddleware(secrets: secrets)) }
        if readiness.configuration.whenNotReady == .refuse { router.add(middleware: NotReadyMiddleware(monitor: readiness)) }
        // Before `/v1/presence/:jid`, which would otherwise take `events` for a JID.
        EventRoutes.add(to: router, hub: hub, lookup: lookup, source: source)
        PeoplePage.add(to: router)
        router.get("/v1/presence/:jid/badge.svg") { request, context -> Response in
            let raw = try context.parameters.require("jid")
            let text = raw.removingPercentEncoding ?? raw
            guard let jid = try? JID(text).bare else {
                return badRequest("jid-malformed", "'\(text)' is not a valid JID")
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
        router.get("/v1/presence/:jid") { request, context -> Response in
            let raw = try context.parameters.require("jid")
            return await answer([raw.removingPercentEncoding ?? raw], request: request, lookup: lookup, source: source)
        }
        router.get("/v1/presence") { request, _ -> Response in
            let jids = request.uri.queryParameters.getAll("jid")
            guard !jids.isEmpty else {
                return badRequest("bad-request", "give at least one jid=... parameter")
            }
            guard jids.count <= maxBatchJIDs else {
                return badRequest(
                    "bad-request",
                    "at most \(maxBatchJIDs) JIDs per request (--http-max-batch); \(jids.count) given: ask in parts")
            }
            return await answer(jids, request: request, lookup: lookup, source: source)
        }
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
                body: .init(byteBuffer: ByteBuffer(bytes: PackageResources.openapi_yaml)))
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
        return router
    }

    /// The answers for `texts` under the request's `policy=` (the lookup's default without one).
    private static func answer(
        _ texts: [String], request: Request, lookup: PresenceLookup, source: XMPPPresenceSource?
    ) async -> Response {
        var policy: LookupPolicy?
        if let raw = request.uri.queryParameters["policy"] {
            guard let chosen = LookupPolicy(rawValue: String(raw)) else {
                return badRequest(
                    "bad-request",
                    "unknown policy '\(raw)'; use one of \(LookupPolicy.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            guard chosen == .cacheOnly || lookup.prober != nil else {
                return badRequest(
                    "bad-request", "policy '\(chosen)' needs an XMPP source to probe; this service has none")
            }
            policy = chosen
        }
        var jids: [BareJID] = []
        jids.reserveCapacity(texts.count)
        for text in texts {
            do {
                jids.append(try JID(text).bare)
            } catch {
                return badRequest("jid-malformed", "'\(text)' is not a valid JID: \(error)")
            }
        }
        let answers = await lookup.lookup(jids, policy: policy)
        let live = source?.isLive
        var writer = JSONWriter(reservingCapacity: 64 + answers.count * 320)
        QueryDocument.write(answers: answers, live: live, to: &writer)
        return json(writer)
    }

    static func badRequest(_ condition: String, _ message: String) -> Response {
        json(ErrorDocument(ErrorReport(condition: condition, message: message)), status: .badRequest)
    }

    static func json(_ document: some JSONDocument, status: HTTPResponse.Status = .ok) -> Response {
        var writer = JSONWriter(reservingCapacity: document.estimatedJSONSize)
        document.write(to: &writer)
        return json(writer, status: status)
    }

    /// A JSON response of the text `writer` holds.
    static func json(_ writer: borrowing JSONWriter, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: writer.withUnsafeBytes { ByteBuffer(bytes: $0) }))
    }
}
