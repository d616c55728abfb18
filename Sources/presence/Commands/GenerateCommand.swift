import ArgumentParser
import Foundation
import PresenceWorkload

/// `presence generate`: a deterministic, realistic stream. Same parameters, same bytes.
struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write a deterministic, realistic presence stream: the same seed gives the same bytes.",
        discussion: """
            People in departments with skewed activity (a few change status all day), several devices with \
            priorities, going offline, subscription and probe noise, messages and IQs, delayed presences, \
            attendance changes and statuses in two languages.
            """)

    @Option(name: .customLong("users"), help: "How many people.")
    var users: Int

    @Option(name: .customLong("updates"), help: "How many presence updates (noise stanzas come on top).")
    var updates: Int

    @Option(name: .customLong("resources"), help: "Most devices per person (default 3).")
    var resources: Int = 3

    @Option(name: .customLong("seed"), help: "Random seed (default 1).")
    var seed: UInt64 = 1

    @Option(
        name: .customLong("interval"),
        help: "Mean seconds between stanzas (default 0.2); sets the times in delay stamps.")
    var interval: Double = 0.2

    @Option(name: [.short, .customLong("output")], help: "Write to this file instead of standard output.")
    var output: String?

    func validate() throws {
        if users < 1 { throw ValidationError("--users must be at least 1") }
        if updates < 0 { throw ValidationError("--updates must not be negative") }
        if resources < 1 { throw ValidationError("--resources must be at least 1") }
        if !(interval > 0 && interval < 86_400) {
            throw ValidationError("--interval must be between 0 and 86400 seconds")
        }
    }

    func run() throws {
        let destination: FileHandle
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: nil),
                let handle = FileHandle(forWritingAtPath: output)
            else {
                FileHandle.standardError.write(Data("presence: cannot open \(output) for writing\n".utf8))
                throw ExitStatus.cannotOpenInput
            }
            destination = handle
        } else {
            destination = FileHandle.standardOutput
        }
        defer { if output != nil { try? destination.close() } }
        var generator = PresenceStreamGenerator(
            .init(
                users: users, updates: updates, maxResources: resources, seed: seed,
                meanIntervalMilliseconds: max(Int(interval * 1000), 1)))
        var buffer = Array(PresenceStreamGenerator.header.utf8)
        buffer.reserveCapacity(1 << 16)
        func flush() {
            destination.write(Data(buffer))
            buffer.removeAll(keepingCapacity: true)
        }
        while generator.next(into: &buffer) {
            if buffer.count >= 1 << 16 { flush() }
        }
        buffer.append(contentsOf: PresenceStreamGenerator.footer.utf8)
        flush()
    }
}
