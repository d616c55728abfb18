import CoreMetrics
import PresencePressure
import PresenceSource
import PresenceStore
import Prometheus

/// The service's metrics through swift-metrics, exposed in the Prometheus text format by swift-prometheus.
///
/// Storage-side values (entries, bytes, removals by cause) are read from the storage at scrape time; ingest
/// counters come from ``ServiceStatistics``. Metrics are created with an explicit factory on the service's own
/// registry, so a process (or a test) can run several services without the global `MetricsSystem`.
public final class ServiceMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let entries: CoreMetrics.Gauge
    private let estimatedBytes: CoreMetrics.Gauge
    private let lost: CoreMetrics.Gauge
    private let feeders: CoreMetrics.Gauge
    private let residentBytes: CoreMetrics.Gauge
    private let stanzas: CoreMetrics.Counter
    private let updates: CoreMetrics.Counter
    private let streamErrors: CoreMetrics.Counter
    private let pressureEvents: CoreMetrics.Counter
    private let streamsOpened: CoreMetrics.Counter
    private let streamsStalled: CoreMetrics.Counter
    private let keepAlivePings: CoreMetrics.Counter
    private let probeLatency: CoreMetrics.Timer
    private let flushDuration: CoreMetrics.Timer
    /// The request-duration histogram's series, one per route, at the route label's raw value.
    private let requestDurations: [CoreMetrics.Timer]
    /// What the counters were last advanced to: they only move forward by the difference at each scrape.
    private let published = Locked([0, 0, 0, 0, 0, 0, 0])

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        // A storage hit answers in tens of microseconds, a probe in milliseconds, a large batch in tens of
        // milliseconds: buckets from 100 µs to 5 s.
        factory.durationHistogramBuckets[Self.requestDurationLabel] = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2500),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
        ]
        self.factory = factory
        requestDurations = HTTPRouteLabel.allCases.map { route in
            Timer(label: Self.requestDurationLabel, dimensions: [("route", route.name)], factory: factory)
        }
        entries = Gauge(label: "presence_storage_entries", factory: factory)
        estimatedBytes = Gauge(label: "presence_storage_estimated_bytes", factory: factory)
        lost = Gauge(label: "presence_storage_lost_users", factory: factory)
        feeders = Gauge(label: "presence_feeders_connected", factory: factory)
        residentBytes = Gauge(label: "presence_resident_bytes", factory: factory)
        stanzas = Counter(label: "presence_stanzas_read_total", factory: factory)
        updates = Counter(label: "presence_updates_applied_total", factory: factory)
        streamErrors = Counter(label: "presence_stream_errors_total", factory: factory)
        pressureEvents = Counter(label: "presence_pressure_events_total", factory: factory)
        streamsOpened = Counter(label: "presence_change_streams_opened_total", factory: factory)
        streamsStalled = Counter(label: "presence_change_streams_stalled_total", factory: factory)
        keepAlivePings = Counter(label: "presence_xmpp_keepalive_pings_total", factory: factory)
        probeLatency = Timer(label: "presence_probe_refill_seconds", factory: factory)
        flushDuration = Timer(label: "presence_disk_flush_seconds", factory: factory)
        // Counters an alert watches are exported at 0 from the start: a rule sees them before the first event.
        for secret in ReloadableSecret.allCases {
            for accepted in [true, false] { _ = secretReloads(secret, accepted: accepted) }
        }
        _ = flushFailures()
    }

    /// One disk-tier flush: its duration in a histogram, what it wrote, and failures.
    public func recordFlush(_ outcome: FlushOutcome) {
        if outcome.error != nil {
            flushFailures().increment()
            return
        }
        flushDuration.record(outcome.duration)
        Counter(label: "presence_disk_users_written_total", factory: factory).increment(by: outcome.users)
        Counter(label: "presence_disk_bytes_written_total", factory: factory).increment(by: outcome.bytes)
    }

    /// One secret read again on SIGHUP (`api-tokens`, `feed-secret`, `tls`): accepted, or refused with the old one
    /// left in force. A refused certificate renewal is worth an alert before the old certificate expires.
    func recordSecretReload(_ secret: ReloadableSecret, accepted: Bool) {
        secretReloads(secret, accepted: accepted).increment()
    }

    private func secretReloads(_ secret: ReloadableSecret, accepted: Bool) -> CoreMetrics.Counter {
        Counter(
            label: "presence_secret_reloads_total",
            dimensions: [("secret", secret.rawValue), ("outcome", accepted ? "accepted" : "refused")], factory: factory)
    }

    private func flushFailures() -> CoreMetrics.Counter {
        Counter(label: "presence_disk_flush_failures_total", factory: factory)
    }

    static let requestDurationLabel = "presence_http_request_duration_seconds"

    /// One HTTP request, from its head to its response's head.
    func recordRequest(route: HTTPRouteLabel, duration: Duration) {
        requestDurations[route.rawValue].record(duration)
    }

    /// One probe batch answered, `duration` after it was sent: the refill latency histogram.
    func recordProbeAnswered(after duration: Duration) {
        probeLatency.record(duration)
    }

    /// Updates the gauges from the storage and the counters, then renders the registry.
    func exposition(
        storage: any MemoryStorage, statistics: ServiceStatistics, source: XMPPSourceStatus?, probes: ProbeStatistics?,
        streams: (open: Int, opened: Int, closedAsStalled: Int) = (0, 0, 0), ready: Bool = true
    ) -> [UInt8] {
        Gauge(label: "presence_ready", factory: factory).record(ready ? 1 : 0)
        // 0 normal, 1 warning, 2 critical.
        Gauge(label: "presence_pressure_level", factory: factory).record(
            MemoryPressure.allCases.firstIndex(of: statistics.pressureLevel) ?? 0)
        Gauge(label: "presence_change_streams_open", factory: factory).record(streams.open)
        let storageStatistics = storage.statistics
        entries.record(storageStatistics.entries)
        estimatedBytes.record(storageStatistics.estimatedBytes)
        lost.record(storageStatistics.lost)
        feeders.record(statistics.feedersConnected)
        if let resident = ProcessMemory.residentBytes() { residentBytes.record(resident) }
        let current = [
            statistics.stanzasRead, statistics.updatesApplied, statistics.streamErrorCount,
            statistics.pressureEventTotal, streams.opened, streams.closedAsStalled, source?.keepAlivePings ?? 0,
        ]
        let deltas = published.withLock { published in
            defer { published = current.enumerated().map { max($1, published[$0]) } }
            return current.enumerated().map { max($1 - published[$0], 0) }
        }
        let counters = [stanzas, updates, streamErrors, pressureEvents, streamsOpened, streamsStalled, keepAlivePings]
        for (counter, delta) in zip(counters, deltas) where delta > 0 {
            counter.increment(by: delta)
        }
        for cause in RemovalCause.allCases {
            Gauge(label: "presence_storage_removals", dimensions: [("cause", cause.rawValue)], factory: factory)
                .record(storageStatistics.removals[cause, default: 0])
        }
        if let source {
            // Gauges of the source's own running totals: a scrape sees them as they are, restarts included.
            Gauge(label: "presence_xmpp_connected", factory: factory).record(source.connected ? 1 : 0)
            Gauge(label: "presence_xmpp_live", factory: factory).record(
                source.connected && source.snapshotComplete ? 1 : 0)
            Gauge(label: "presence_xmpp_roster_members", factory: factory).record(source.rosterSize)
            Gauge(label: "presence_xmpp_reconnects", factory: factory).record(source.reconnects)
            Gauge(label: "presence_xmpp_connect_attempts", factory: factory).record(source.connectAttempts)
            Gauge(label: "presence_xmpp_presences_received", factory: factory).record(source.presencesReceived)
            Gauge(label: "presence_xmpp_snapshot_unconfirmed", factory: factory).record(source.snapshotUnconfirmed)
            Gauge(label: "presence_xmpp_partial_users", factory: factory).record(source.partialUsers)
            Gauge(label: "presence_xmpp_replaced", factory: factory).record(source.replaced ? 1 : 0)
            Gauge(label: "presence_xmpp_resyncs", factory: factory).record(source.resyncs)
            Gauge(label: "presence_xmpp_resync_probed", factory: factory).record(source.resyncProbed)
            Gauge(label: "presence_xmpp_resync_corrected", factory: factory).record(source.resyncCorrected)
            Gauge(label: "presence_xmpp_last_resync_seconds", factory: factory).record(
                source.lastResyncDuration?.seconds ?? 0)
            Gauge(label: "presence_xmpp_read_limited", factory: factory).record(source.readLimit == nil ? 0 : 1)
            Gauge(label: "presence_xmpp_read_limit_bytes_per_second", factory: factory).record(
                source.readLimit?.bytesPerSecond ?? 0)
            Gauge(label: "presence_xmpp_questions_waiting", factory: factory).record(source.questionsWaiting)
            Gauge(label: "presence_xmpp_questions_in_flight", factory: factory).record(source.questionsInFlight)
        }
        if let disk = storage.diskTierStatistics {
            let gauges = [
                ("presence_disk_dirty_users", disk.dirty), ("presence_disk_users", disk.diskUsers),
                ("presence_disk_file_bytes", disk.fileBytes), ("presence_disk_restored_users", disk.restored),
                ("presence_disk_spilled_users", disk.spilledTotal),
                ("presence_disk_last_flush_timestamp_seconds", Int((disk.lastFlushAt?.millisecondsSinceEpoch ?? 0) / 1000)),
            ]
            for (label, value) in gauges { Gauge(label: label, factory: factory).record(value) }
            for (tier, value) in [("memory", disk.memoryHits), ("disk", disk.diskHits), ("none", disk.misses)] {
                Gauge(label: "presence_disk_lookups", dimensions: [("answered_by", tier)], factory: factory)
                    .record(value)
            }
        }
        if let probes {
            let outcomes = [
                ("sent", probes.sent), ("answered", probes.answered), ("timed-out", probes.timedOut),
                ("failed", probes.failed), ("refused-by-budget", probes.refusedByBudget),
                ("joined-in-flight", probes.joinedInFlight), ("not-connected", probes.notConnected),
            ]
            for (outcome, value) in outcomes {
                Gauge(label: "presence_probes", dimensions: [("outcome", outcome)], factory: factory).record(value)
            }
        }
        return registry.emitToBuffer()
    }
}

extension CoreMetrics.Timer {
    /// Records `duration` in whole nanoseconds.
    fileprivate func record(_ duration: Duration) {
        recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }
}
