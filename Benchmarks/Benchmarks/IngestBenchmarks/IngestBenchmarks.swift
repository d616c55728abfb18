import Benchmark
import CExpatReference
import PresenceIngest
import PresenceStore
import PresenceWorkload
import XMPPStream

// Parse + decode + aggregate throughput on a generated office stream of 500k presence updates (about 520k
// stanzas, 68 MB, with subscription noise, messages and IQs mixed in), the same generator as
// `presence generate`. Each iteration ingests the whole stream once; stanzas/s and MB/s are computed from the
// iteration's own clock. Two references run in the same process, so the ratios hold on a noisy machine:
// expat alone with empty callbacks (the floor), and the parser without presence decoding.

enum Metrics {
    static let stanzasPerSecond = BenchmarkMetric.custom("stanzas/s", polarity: .prefersLarger, useScalingFactor: false)
    static let megabytesPerSecond = BenchmarkMetric.custom("MB/s", polarity: .prefersLarger, useScalingFactor: false)
}

let stream: [UInt8] = {
    var generator = PresenceStreamGenerator(.init(users: 100_000, updates: 500_000, maxResources: 3, seed: 1))
    return generator.generate()
}()

/// Runs `body` over the stream, timing it, and records the rates; `body` returns how many stanzas it saw.
func measure(_ benchmark: Benchmark, _ body: () -> Int) {
    benchmark.startMeasurement()
    let start = ContinuousClock.now
    let stanzas = body()
    let elapsed = start.duration(to: .now)
    benchmark.stopMeasurement()
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    benchmark.measurement(Metrics.stanzasPerSecond, Int(Double(stanzas) / seconds))
    benchmark.measurement(Metrics.megabytesPerSecond, Int(Double(stream.count) / 1e6 / seconds))
}

/// expat with namespace processing and callbacks that only count stanzas: what any expat-based parser costs.
func expatWithEmptyCallbacks(_ bytes: [UInt8]) -> Int {
    final class Counter { var depth = 0; var stanzas = 0 }
    let counter = Counter()
    let parser = XML_ParserCreateNS("UTF-8", 1)
    defer { XML_ParserFree(parser) }
    XML_SetUserData(parser, Unmanaged.passUnretained(counter).toOpaque())
    XML_SetElementHandler(
        parser,
        { userData, _, _ in Unmanaged<Counter>.fromOpaque(userData!).takeUnretainedValue().depth += 1 },
        { userData, _ in
            let counter = Unmanaged<Counter>.fromOpaque(userData!).takeUnretainedValue()
            counter.depth -= 1
            if counter.depth == 1 { counter.stanzas += 1 }
        })
    XML_SetCharacterDataHandler(parser) { _, _, _ in }
    bytes.withUnsafeBufferPointer { buffer in
        var offset = 0
        while offset < buffer.count {
            let length = min(1 << 20, buffer.count - offset)
            _ = XML_Parse(
                parser, UnsafeRawPointer(buffer.baseAddress! + offset).assumingMemoryBound(to: CChar.self),
                Int32(length), 0)
            offset += length
        }
    }
    return counter.stanzas
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, Metrics.stanzasPerSecond, Metrics.megabytesPerSecond],
        units: [Metrics.stanzasPerSecond: .count, Metrics.megabytesPerSecond: .count],
        warmupIterations: 1,
        maxDuration: .seconds(30),
        maxIterations: 10)

    Benchmark("ingest: parse + decode + aggregate into [BareJID: UserPresence]") { benchmark in
        _ = stream.count  // generate outside the measured region
        measure(benchmark) {
            var feed = PresenceFeed()
            var users: [BareJID: UserPresence] = [:]
            let now = PresenceTime(secondsSinceEpoch: 1_795_400_000)
            let apply: (PresenceUpdate) -> Void = { update in
                users[update.from.bare, default: UserPresence()].apply(update, receivedAt: now)
            }
            stream.withUnsafeBytes { buffer in
                do throws(XMPPStreamError) {
                    try feed.feed(buffer, apply: apply)
                    try feed.finish(apply: apply)
                } catch {
                    fatalError("generated stream failed to parse: \(error)")
                }
            }
            blackHole(users)
            return feed.statistics.stanzas
        }
    }

    Benchmark("reference: XMPPStreamParser alone (stanza trees, no decoding)") { benchmark in
        _ = stream.count
        measure(benchmark) {
            let parser = XMPPStreamParser()
            var stanzas = 0
            stream.withUnsafeBytes { buffer in
                try? parser.feed(buffer) { event in
                    if case .stanza = event { stanzas += 1 }
                }
            }
            return stanzas
        }
    }

    Benchmark("reference: libexpat alone, empty callbacks") { benchmark in
        _ = stream.count
        measure(benchmark) { expatWithEmptyCallbacks(stream) }
    }
}
