/// The table of `presence serve`'s settings. Each key is declared once, beside the others of its concern
/// (`SettingKeys+…`), and listed here in the order of the help and of `--print-config`: a key missing from this
/// list is a flag with no file key and no variable, which the configuration tests refuse.
enum SettingKeys {
    static let serve: [AnySettingKey] = [
        storage.erased, countLimit.erased, costLimit.erased, timeToLive.erased, warningRetain.erased,
        dataDirectory.erased, diskFlushInterval.erased, diskFlushDirty.erased, diskReset.erased,
        feed.erased, http.erased, allowRemote.erased, maxConnections.erased, feedApplyThreads.erased, eventLoops.erased,
        idleTimeout.erased,
        apiTokenFile.erased, metricsOpen.erased, feedSecretFile.erased, tlsCertificate.erased, tlsKey.erased,
        insecureHTTP.erased,
        httpMaxBatch.erased, httpMaxConnections.erased, httpHeaderTimeout.erased,
        memoryBudget.erased, psi.erased,
        xmppJID.erased, xmppPasswordFile.erased, xmppHost.erased, xmppPort.erased, xmppTLS.erased,
        xmppCAFile.erased, xmppResource.erased, xmppKeepAlive.erased, xmppDeadTimeout.erased,
        xmppReconnectMax.erased, xmppMaxStanzaBytes.erased, probeTimeout.erased, probeRate.erased,
        xmppSettle.erased, xmppReaskInterval.erased, xmppQuestionsInFlight.erased, xmppSessionsAPI.erased,
        eventsMaxJIDs.erased, eventsMaxStreams.erased, eventsHeartbeat.erased, eventsWriteTimeout.erased,
        eventsHistory.erased, eventsRetry.erased,
        readyGrace.erased, whenNotReady.erased, resyncInterval.erased, resyncRate.erased, resyncMembers.erased,
        maxStanzaBytes.erased, maxDepth.erased, maxChildren.erased, maxStatusBytes.erased,
        logLevel.erased,
    ]

    static let serveByName: [String: AnySettingKey] = Dictionary(uniqueKeysWithValues: serve.map { ($0.name, $0) })

    /// Names that steer the command line itself and are no setting.
    static let commandLineOnly: Set<String> = ["help", "version", "config", "print-config"]

    /// The known key nearest to `unknown` by edit distance, when one is close enough to be a likely typo.
    static func suggestion(for unknown: String) -> String? {
        let scored = serve.map { ($0.name, editDistance($0.name, unknown)) }.min { $0.1 < $1.1 }
        guard let (name, distance) = scored, distance <= max(2, unknown.count / 4) else { return nil }
        return name
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        guard !a.isEmpty else { return b.count }
        var previous = Array(0 ... b.count)
        for i in 1 ... a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = Swift.min(
                    previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
