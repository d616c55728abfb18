import ArgumentParser
import PresenceStore

/// The disk tier of `presence serve`: where it lives and how often it is written.
struct DiskOptions: ParsableArguments {
    @Option(
        name: .customLong("data-dir"),
        help: """
            Keep a disk tier in this directory (created if missing; one process per directory): statuses survive \
            restarts and crashes, and what an evicting storage drops is read back from disk.
            """)
    var dataDirectory: String?

    @Option(
        name: .customLong("disk-flush-interval"),
        help: "Most milliseconds a changed status waits in memory before it is written to disk (default 1000).")
    var flushIntervalMilliseconds: Int = 1000

    @Option(
        name: .customLong("disk-flush-dirty"),
        help: "Changes waiting for the disk that start a write before the interval is up (default 50000).")
    var flushDirty: Int = TieredStorage.Configuration.defaultFlushDirtyThreshold

    @Flag(
        name: .customLong("disk-reset"),
        help: "Set the disk tier's file aside (renamed, never deleted) and start with an empty tier.")
    var reset = false

    func validate() throws {
        if !(1 ... 3_600_000).contains(flushIntervalMilliseconds) {
            throw ValidationError("--disk-flush-interval must be between 1 and 3600000 milliseconds")
        }
        if flushDirty < 1 { throw ValidationError("--disk-flush-dirty must be at least 1") }
        if reset && dataDirectory == nil { throw ValidationError("--disk-reset needs --data-dir") }
    }

    var configuration: TieredStorage.Configuration {
        TieredStorage.Configuration(
            flushInterval: .milliseconds(flushIntervalMilliseconds), flushDirtyThreshold: flushDirty)
    }
}
