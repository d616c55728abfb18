import NIOCore
import NIOPosix
import PresenceModel

/// The change streams of one event loop that have something to write, pumped together by one task of that loop.
///
/// A change wakes the stream of each subscription that watches its person. The first stream woken since the loop
/// last pumped schedules the task; the others join its list, so a change watched by many streams on one loop costs
/// that loop one task, not one per stream. The streams are pumped in the order they were woken.
final class LoopPumps: Sendable {
    private let eventLoop: any EventLoop
    private let woken = Locked(Woken())

    /// The streams woken since the last pump, and a spare list, empty, that takes their place when they are pumped
    /// (no allocation per pump).
    private struct Woken {
        var streams: [NIOLoopBound<ChannelEventStream>] = []
        var spare: [NIOLoopBound<ChannelEventStream>] = []
    }

    private init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// `stream` has something to write: it is pumped in a coming turn of its loop.
    ///
    /// Woken from another event loop (a feeder's connection applying what it read), the loop is told once that turn
    /// of the waking loop is done: every change of the read, and of the other reads of that turn, joins the list
    /// meanwhile, so a loop sleeping on another core is woken once for them rather than once for each (waking a
    /// thread on another core costs more than the writing it is woken for; Documentation/Benchmarks.md).
    func wake(_ stream: NIOLoopBound<ChannelEventStream>) {
        let first = woken.withLock { woken in
            woken.streams.append(stream)
            return woken.streams.count == 1
        }
        guard first else { return }
        if !eventLoop.inEventLoop, let waking = MultiThreadedEventLoopGroup.currentEventLoop {
            waking.execute { self.eventLoop.execute { self.pumpWoken() } }
        } else {
            eventLoop.execute { self.pumpWoken() }
        }
    }

    private func pumpWoken() {
        var streams = woken.withLock { woken in
            // The woken list is taken whole; the spare, empty with its capacity, takes its place.
            var taken = woken.spare
            swap(&taken, &woken.streams)
            woken.spare = []
            return taken
        }
        for stream in streams { stream.value.pump() }
        streams.removeAll(keepingCapacity: true)
        woken.withLock { $0.spare = streams }
    }

    /// Each event loop's pumps, made when a loop opens its first stream and kept for as long as the service runs.
    final class Registry: Sendable {
        private let loops = Locked<[ObjectIdentifier: LoopPumps]>([:])

        init() {}

        /// The pumps of `eventLoop`.
        func pumps(for eventLoop: any EventLoop) -> LoopPumps {
            loops.withLock { loops in
                if let pumps = loops[ObjectIdentifier(eventLoop)] { return pumps }
                let pumps = LoopPumps(eventLoop: eventLoop)
                loops[ObjectIdentifier(eventLoop)] = pumps
                return pumps
            }
        }
    }
}
