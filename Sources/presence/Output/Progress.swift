import Foundation

/// Bytes read and stanzas per second on standard error, only when it is a terminal.
final class Progress {
    private let label: String
    private let enabled: Bool
    private var lastUpdate = ContinuousClock.now
    private var shown = false

    /// - Parameter enabled: false to stay silent even on a terminal (runs in parallel would overwrite each other).
    init(label: String, enabled: Bool = true) {
        self.label = label
        self.enabled = enabled && isatty(STDERR_FILENO) != 0
    }

    func update(bytes: Int, stanzas: Int, since start: ContinuousClock.Instant) {
        guard enabled else { return }
        let now = ContinuousClock.now
        guard now - lastUpdate > .milliseconds(250) else { return }
        lastUpdate = now
        let seconds = max((now - start).seconds, 0.001)
        let line =
            "\r\(label): \(Format.bytes(bytes)) read, \(Format.count(stanzas)) stanzas, \(Format.count(Int(Double(stanzas) / seconds))) stanzas/s "
        FileHandle.standardError.write(Data(line.utf8))
        shown = true
    }

    func finish() {
        guard shown else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
