import Dispatch
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The program's entry point: runs ``PresenceCommand`` with Swift Concurrency's tasks on SwiftNIO's event loops.
///
/// By default every task runs on Swift's own thread pool while SwiftNIO does the I/O on its event loops, so each
/// HTTP request and feeder chunk crosses between two sets of threads, twice. With the event loops installed as
/// the global executor the query API answered ×.× more requests per second on this machine's two cores (see the
/// README, issue 12). The hook must be installed before the first task exists, hence a synchronous entry point
/// that starts the command as a task and then serves the main queue (`dispatchMain` never returns; the task
/// ends the process).
@main
enum Main {
    static func main() {
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        Task {
            await PresenceCommand.main()
            exit(0)
        }
        dispatchMain()
    }
}
