import Foundation
import PresenceTestSupport

/// Change streams of a running service held open by a child process (`Resources/hold_streams.py`), each counted
/// open once its snapshot event has come, and closed together by ``release()``.
///
/// Thousands of descriptors must not live in the test process: Foundation's `Process.run()` on Linux (Swift 6.3)
/// lists /proc/self/fd and over-reads the directory buffer once some 1,350 descriptors are open, so a suite
/// starting a server beside a test holding the streams itself would crash the whole test run.
final class HeldStreams {
    let count: Int
    private let process: Process
    private let input: Pipe

    /// Opens `count` streams on `port`, the i-th watching `<prefix>i@example.com`; throws with the script's words
    /// when one did not open.
    init(count: Int, watching prefix: String, port: Int) async throws {
        let script = Bundle.module.url(forResource: "hold_streams", withExtension: "py")!
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script.path, "\(port)", prefix, "\(count)"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        self.count = count
        self.process = process
        self.input = input
        let reader = output.fileHandleForReading
        let line = await onAThreadOfItsOwn { Self.firstLine(of: reader) }
        guard line == "open \(count)" else {
            release()
            throw LoopbackTCP.Failure(description: "holding \(count) streams: \(line.isEmpty ? "no answer" : line)")
        }
    }

    /// Closes every stream: the script ends with its standard input.
    func release() {
        try? input.fileHandleForWriting.close()
        _ = CLI.waitForExit(process, timeout: TestDeadline.processExit)
    }

    private static func firstLine(of handle: FileHandle) -> String {
        var bytes = Data()
        while !bytes.contains(UInt8(ascii: "\n")) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            bytes.append(chunk)
        }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
    }
}
