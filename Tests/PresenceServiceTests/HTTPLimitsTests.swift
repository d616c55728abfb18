import Foundation
import PresenceService
import PresenceTestSupport
import Testing

@Suite("The query API's limits: batch size, connections, and clients that send their headers too slowly")
struct HTTPLimitsTests {
    static let request = "GET /healthz HTTP/1.1\r\nHost: presence\r\n\r\n"

    @Test func aBatchOverTheLimitIsRefusedWithTheReasonOnBothAnswerPaths() async throws {
        try await withService(configure: { $0.http.maxBatchJIDs = 3 }) { ports in
            let feeder = try await Feeder.connect(port: ports.feed)
            try await feeder.send(
                "<presence from='a@x.example/r'/><presence from='b@x.example/r'/><presence from='c@x.example/r'/>")
            feeder.close()
            #expect(try await eventually { try await state(of: "c@x.example", port: ports.http)?.state == .available })
            let three = try await httpGet(
                "/v1/presence?jid=a@x.example&jid=b@x.example&jid=c@x.example", port: ports.http)
            #expect(three.status == 200)
            let four = try await httpGet(
                "/v1/presence?jid=a@x.example&jid=b@x.example&jid=c@x.example&jid=d@x.example", port: ports.http)
            #expect(four.status == 400)
            #expect(String(decoding: four.body, as: UTF8.self).contains("at most 3 JIDs per request"))
        }
    }

    @Test func overTheConnectionLimitANewClientWaitsUntilAPlaceIsFreed() async throws {
        try await withService(configure: { $0.http.maxConnections = 3 }) { ports in
            var held: [Feeder] = []
            for _ in 0 ..< 3 {
                let client = try await Feeder.connect(port: ports.http)
                try await client.send(Self.request)
                #expect(try await client.read(until: "ok\n").contains("200 OK"), "kept alive, holding a place")
                held.append(client)
            }
            // The kernel completes the connection (backlog); the service does not accept it while three are open.
            let waiting = try await Feeder.connect(port: ports.http)
            defer { waiting.close() }
            try await waiting.send(Self.request)
            try await Task.sleep(for: .milliseconds(500))
            var byte: UInt8 = 0
            let arrived = recv(waiting.descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            #expect(arrived < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), "no answer while three are open")
            held.removeFirst().close()
            #expect(try await waiting.read(until: "ok\n").contains("200 OK"), "answered once a place was freed")
            for client in held { client.close() }
        }
    }

    @Test func aClientThatTricklesItsHeadersIsClosedAtTheDeadlineAndOthersAreServed() async throws {
        try await withService(configure: { $0.http.headerTimeout = .milliseconds(600) }) { ports in
            let slow = try await Feeder.connect(port: ports.http)
            let started = ContinuousClock.now
            var sent = 0
            // One byte every 100 ms: a read-idle timeout would never fire; the head's deadline does.
            for byte in Array(Self.request.utf8) {
                do { try await slow.send([byte]) } catch { break }
                sent += 1
                try await Task.sleep(for: .milliseconds(100))
                if ContinuousClock.now - started > .seconds(10) { break }
            }
            let answer = try await slow.readUntilClosed()
            #expect(answer.closedByService)
            #expect(!answer.text.contains("200 OK"))
            #expect(sent < Self.request.utf8.count, "closed before the head was complete")
            slow.close()
            let healthy = try await httpGet("/healthz", port: ports.http)
            #expect(healthy.status == 200)
            // An idle kept-alive connection is closed too once the deadline passes after its last answer.
            let idle = try await Feeder.connect(port: ports.http)
            try await idle.send(Self.request)
            #expect(try await idle.read(until: "ok\n").contains("200 OK"))
            #expect(try await idle.readUntilClosed().closedByService)
            idle.close()
        }
    }
}
