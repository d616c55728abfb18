import NIOCore

/// Runs a task's nonisolated code on one SwiftNIO event loop: a task that prefers it
/// (`withTaskExecutorPreference`) resumes on that loop's thread rather than on a thread of Swift's global pool.
///
/// A feeder's connection reads on its event loop. A task that reads it from the global pool is woken there for
/// each read, and wakes the loop again for each stream it marks: two threads woken for what a live feeder sends
/// each millisecond. Resumed on the connection's own loop, the read costs no hop and the streams on that loop are
/// marked from inside it (``FeedServer``).
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
