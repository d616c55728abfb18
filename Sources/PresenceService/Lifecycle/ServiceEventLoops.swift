import NIOPosix
import PresenceModel

/// The event loops that run the feed port's and the query API's connections: one group per thread count
/// (``ServiceConfiguration/eventLoops``), made when a service first asks for it and kept for the life of the
/// process, as SwiftNIO keeps its own `MultiThreadedEventLoopGroup.singleton`.
///
/// A service never shuts its loops down because there is no moment at which that is safe: Hummingbird ends its
/// server's graceful shutdown in an unstructured task that may still be releasing the server's quiescing helper
/// after `run()` has returned, and that release schedules onto one of the group's loops. Shut down by then, the
/// loop refuses it with SwiftNIO's "Cannot schedule tasks on an EventLoop that has already shut down" (a crash
/// in a future SwiftNIO). Services in one process that ask for the same count share the group; their
/// connections are their own.
enum ServiceEventLoops {
    private static let groups = Locked<[Int: MultiThreadedEventLoopGroup]>([:])

    /// The process's group of `threads` loops.
    static func group(threads: Int) -> MultiThreadedEventLoopGroup {
        groups.withLock { groups in
            if let group = groups[threads] { return group }
            let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
            groups[threads] = group
            return group
        }
    }
}
