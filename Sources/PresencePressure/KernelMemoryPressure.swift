import PresenceStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Real memory pressure from the Linux kernel: PSI triggers (`memory.pressure` of the process's cgroup v2, else
/// `/proc/pressure/memory`) and, where the process is in a cgroup v2 with a memory controller, the `high`,
/// `max` and `oom` counters of `memory.events`.
///
/// Every signal is optional: ``start(stallMicroseconds:windowSeconds:)`` detects what the machine offers and
/// returns nil with the reasons when nothing is usable (no PSI in the kernel, cgroup v1 only, no permission),
/// so callers fall back cleanly. Unprivileged PSI triggers need a window that is a multiple of 2 s.
/// A background thread waits on the triggers with `poll`; ``check(_:)`` hands over what it saw.
public final class KernelMemoryPressure: MemoryPressureSource {
    public let description: String
    private let warningDescriptor: Int32
    private let criticalDescriptor: Int32
    private let eventsPath: String?
    /// `memory.events` is read at most this often, however often ``check(_:)`` is called (a replay
    /// calls it for every update).
    private let eventsInterval: Duration
    private let state: Locked<State>

    private struct State {
        /// The strongest level the polling thread saw since the last check.
        var pending: MemoryPressure?
        var lastEvents: [String: Int] = [:]
        var lastEventsRead: ContinuousClock.Instant?
        var stopped = false
        var thread: pthread_t?
    }

    public static let defaultEventsInterval: Duration = .milliseconds(250)

    /// What was found when trying to start: which signals are live, and why the others are not.
    public struct Detection: Sendable {
        public var sources: [String]
        public var unavailable: [String]
    }

    /// Starts watching. `warning` fires when some task stalled on memory for `stallMicroseconds` within the
    /// window; `critical` when all tasks did (PSI's `some` and `full` lines).
    public static func start(
        stallMicroseconds: Int = 100_000, windowSeconds: Int = 2, eventsInterval: Duration = defaultEventsInterval
    ) -> (KernelMemoryPressure?, Detection) {
        var detection = Detection(sources: [], unavailable: [])
        let window = max(2, windowSeconds + windowSeconds % 2) * 1_000_000
        var descriptors: (Int32, Int32)?
        var used = ""
        for path in pressurePaths() {
            let warning = open(path, O_RDWR | O_NONBLOCK)
            guard warning >= 0 else {
                detection.unavailable.append("\(path): \(String(cString: strerror(errno)))"); continue
            }
            let critical = open(path, O_RDWR | O_NONBLOCK)
            if register(warning, "some \(stallMicroseconds) \(window)"), critical >= 0,
                register(critical, "full \(stallMicroseconds) \(window)")
            {
                descriptors = (warning, critical)
                used = path
                break
            }
            detection.unavailable.append("\(path): trigger refused (\(String(cString: strerror(errno))))")
            close(warning)
            if critical >= 0 { close(critical) }
        }
        let events = memoryEventsPath()
        if let events {
            detection.sources.append(events)
        } else {
            detection.unavailable.append("memory.events: no cgroup v2 memory controller for this process")
        }
        guard descriptors != nil || events != nil else { return (nil, detection) }
        if descriptors != nil { detection.sources.insert("PSI \(used)", at: 0) }
        let monitor = KernelMemoryPressure(
            description: detection.sources.joined(separator: " + "), warning: descriptors?.0 ?? -1,
            critical: descriptors?.1 ?? -1, eventsPath: events,
            eventsInterval: eventsInterval)
        monitor.startThread()
        return (monitor, detection)
    }

    private init(description: String, warning: Int32, critical: Int32, eventsPath: String?, eventsInterval: Duration) {
        self.description = description
        warningDescriptor = warning
        criticalDescriptor = critical
        self.eventsPath = eventsPath
        self.eventsInterval = eventsInterval
        state = Locked(
            State(
                lastEvents: eventsPath.map(KernelMemoryPressure.readEvents) ?? [:],
                lastEventsRead: ContinuousClock.now))
    }

    deinit {
        stop()
        if warningDescriptor >= 0 { close(warningDescriptor) }
        if criticalDescriptor >= 0 { close(criticalDescriptor) }
    }

    /// Stops the polling thread; waits for it to finish.
    public func stop() {
        let running: pthread_t? = state.withLock { state in
            state.stopped = true
            defer { state.thread = nil }
            return state.thread
        }
        if let running { pthread_join(running, nil) }
    }

    public func check(_ checkpoint: PressureCheckpoint) -> MemoryPressure? {
        let now = ContinuousClock.now
        let (pending, readEvents) = state.withLock { state in
            defer { state.pending = nil }
            let due = state.lastEventsRead.map { now - $0 >= eventsInterval } ?? true
            if due { state.lastEventsRead = now }
            return (state.pending, due)
        }
        var level = pending
        if let eventsPath, readEvents {
            let events = KernelMemoryPressure.readEvents(eventsPath)
            let previous = state.withLock { state in
                defer { state.lastEvents = events }
                return state.lastEvents
            }
            if events["oom", default: 0] > previous["oom", default: 0]
                || events["max", default: 0] > previous["max", default: 0]
            {
                level = .critical
            } else if events["high", default: 0] > previous["high", default: 0] {
                level = max(level ?? .warning, .warning)
            }
        }
        return level
    }

    // MARK: Internals

    private func startThread() {
        guard warningDescriptor >= 0 else { return }
        let context = Unmanaged.passRetained(self).toOpaque()
        var handle = pthread_t()
        let created = pthread_create(
            &handle, nil,
            { context in
                let monitor = Unmanaged<KernelMemoryPressure>.fromOpaque(context!).takeRetainedValue()
                monitor.pollLoop()
                return nil
            }, context)
        if created == 0 {
            state.withLock { $0.thread = handle }
        } else {
            Unmanaged<KernelMemoryPressure>.fromOpaque(context).release()
        }
    }

    private func pollLoop() {
        var descriptors = [
            pollfd(fd: warningDescriptor, events: Int16(POLLPRI), revents: 0),
            pollfd(fd: criticalDescriptor, events: Int16(POLLPRI), revents: 0),
        ]
        while !state.withLock({ $0.stopped }) {
            let ready = poll(&descriptors, nfds_t(descriptors.count), 250)
            guard ready > 0 else { continue }
            var level: MemoryPressure?
            if descriptors[1].revents & Int16(POLLPRI) != 0 {
                level = .critical
            } else if descriptors[0].revents & Int16(POLLPRI) != 0 {
                level = .warning
            }
            if descriptors.contains(where: { $0.revents & Int16(POLLERR) != 0 }) {
                // The trigger is gone (the cgroup was removed): stop watching and let go of the thread.
                state.withLock { state in
                    state.stopped = true
                    if let thread = state.thread { pthread_detach(thread) }
                    state.thread = nil
                }
                return
            }
            if let level { state.withLock { $0.pending = max($0.pending ?? level, level) } }
        }
    }

    private static func register(_ descriptor: Int32, _ trigger: String) -> Bool {
        var bytes = Array(trigger.utf8)
        bytes.append(0)
        return write(descriptor, bytes, bytes.count) >= 0
    }

    /// The cgroup v2 directory of this process, from `/proc/self/cgroup` (`0::/path`), if any.
    private static func cgroupV2Directory() -> String? {
        for line in ProcFile.lines("/proc/self/cgroup") ?? [] {
            guard line.hasPrefix("0::") else { continue }
            for mount in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
                let directory = mount + String(line.dropFirst(3))
                if access(directory + "/cgroup.controllers", R_OK) == 0 { return directory }
            }
        }
        return nil
    }

    private static func pressurePaths() -> [String] {
        var paths: [String] = []
        if let directory = cgroupV2Directory(), access(directory + "/memory.pressure", R_OK) == 0 {
            paths.append(directory + "/memory.pressure")
        }
        paths.append("/proc/pressure/memory")
        return paths
    }

    private static func memoryEventsPath() -> String? {
        guard let directory = cgroupV2Directory() else { return nil }
        let path = directory + "/memory.events"
        return access(path, R_OK) == 0 ? path : nil
    }

    private static func readEvents(_ path: String) -> [String: Int] {
        var events: [String: Int] = [:]
        for line in ProcFile.lines(path) ?? [] {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Int(parts[1]) { events[String(parts[0])] = value }
        }
        return events
    }
}
