import NIOCore

/// Runs a task's jobs on one NIO event loop. A group commit's batch runs on its connection's
/// loop, so that each statement's answer resumes the writer on the thread that read it, instead of
/// waking one of Swift's pool threads for it: four round trips a batch, each a futex wake, were a
/// seventh of the server's CPU for a lone risk query on this machine's virtual CPUs
/// (docs/PERFORMANCE.md). What the writer computes between statements (the batch's decisions) runs on
/// that loop too, a few microseconds a query. A fresh token's risk query answered on the event loop
/// (the server's `EventLoopRiskQueries`) runs on its connection's loop the same way.
public final class EventLoopTaskExecutor: TaskExecutor {
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
