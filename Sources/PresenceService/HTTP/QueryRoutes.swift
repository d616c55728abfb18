import Foundation
import Hummingbird
import NIOCore
import PresenceStore
import Prometheus

/// The query API: presence by JID, service statistics, Prometheus metrics and a health check.
enum QueryRoutes {
    static func router(storage: any MemoryStorage, statistics: ServiceStatistics, metrics: ServiceMetrics) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/v1/presence/:jid") { _, context -> Response in
            let raw = try context.parameters.require("jid")
            return lookup([raw.removingPercentEncoding ?? raw], in: storage)
        }
        router.get("/v1/presence") { request, _ -> Response in
            let jids = request.uri.queryParameters.getAll("jid")
            guard !jids.isEmpty else { return json(ErrorBody(error: "give at least one jid=... parameter"), status: .badRequest) }
            return lookup(jids, in: storage)
        }
        router.get("/v1/stats") { _, _ -> Response in
            json(ServiceStats(storage: storage, statistics: statistics))
        }
        router.get("/metrics") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition(storage: storage, statistics: statistics))))
        }
        router.get("/healthz") { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        return router
    }

    struct ErrorBody: Encodable {
        let error: String
    }

    private static func lookup(_ jids: [String], in storage: any MemoryStorage) -> Response {
        var results: [PresenceQueryResult] = []
        for text in jids {
            guard let jid = try? JID(text) else {
                return json(ErrorBody(error: "'\(text)' is not a valid JID"), status: .badRequest)
            }
            results.append(PresenceQueryResult(jid: jid.bare, stored: storage.lookup(jid.bare)))
        }
        var body: [UInt8] = Array("{\"error\":null,\"results\":[".utf8)
        body.reserveCapacity(160 * results.count + 32)
        for (index, result) in results.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            result.appendJSON(to: &body)
        }
        body.append(contentsOf: "]}".utf8)
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
