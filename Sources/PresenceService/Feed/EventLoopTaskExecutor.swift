import NIOCore

/// Runs a task's nonisolated code on one SwiftNIO event loop: a task that prefers it
/// (`withTaskExecutorPreference`) resumes on that loop's thread rather than on a thread of Swift's global pool
/// (``FeederConnection`` says why a feeder's task does).
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
