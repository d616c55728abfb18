import Foundation
import Hummingbird
import NIOCore
import PresenceSource
import PresenceStore
import PresenceWire

/// The query API: presence by JID, service statistics, Prometheus metrics and a health check. Every JSON body is
/// a document of the wire format (`PresenceWire`), written by its one encoder.
enum QueryRoutes {
    static func router(
        storage: any MemoryStorage, statistics: ServiceStatistics, metrics: ServiceMetrics,
        source: XMPPPresenceSource?
    ) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/v1/presence/:jid") { _, context -> Response in
            let raw = try context.parameters.require("jid")
            return lookup([raw.removingPercentEncoding ?? raw], in: storage, live: source?.isLive)
        }
        router.get("/v1/presence") { request, _ -> Response in
            let jids = request.uri.queryParameters.getAll("jid")
            guard !jids.isEmpty else {
                return json(
                    ErrorDocument(
                        ErrorReport(condition: "bad-request", message: "give at least one jid=... parameter")),
                    status: .badRequest)
            }
            return lookup(jids, in: storage, live: source?.isLive)
        }
        router.get("/v1/stats") { _, _ -> Response in
            json(ServiceStats(storage: storage, statistics: statistics, source: source))
        }
        router.get("/metrics") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(
                    byteBuffer: ByteBuffer(
                        bytes: metrics.exposition(storage: storage, statistics: statistics, source: source?.status)))
            )
        }
        router.get("/healthz") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        return router
    }

    private static func lookup(_ jids: [String], in storage: any MemoryStorage, live: Bool?) -> Response {
        var results: [PresenceQueryResult] = []
        results.reserveCapacity(jids.count)
        for text in jids {
            let jid: JID
            do {
                jid = try JID(text)
            } catch {
                return json(
                    ErrorDocument(
                        ErrorReport(condition: "jid-malformed", message: "'\(text)' is not a valid JID: \(error)")),
                    status: .badRequest)
            }
            results.append(PresenceQueryResult(jid: jid.bare, stored: storage.lookup(jid.bare), live: live))
        }
        return json(QueryDocument(results: results))
    }

    static func json(_ document: some JSONDocument, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: document.jsonBytes())))
    }
}
