import ArgumentParser
import Logging
import PresenceService

/// Everything `presence serve` runs with, read from one ``Settings`` and checked as a whole before anything
/// starts: each part checks its own values, and the combinations across parts are checked here.
struct ServeSettings {
    let storage: StorageName
    let storageLimits: StorageLimits
    let disk: DiskTierSettings
    let listeners: ListenerSettings
    let access: ServiceAccessSettings
    let httpLimits: HTTPLimits
    let pressure: RealPressure
    let xmpp: XMPPSettings
    let events: EventStreamConfiguration
    let replicas: ReplicaSettings
    let stream: StreamLimits
    let logLevel: Logger.Level
    /// `PRESENCE_*` variables that are no setting, told in the log as the service starts.
    let environmentNotices: [EnvironmentLayer.Notice]
    /// The files of secrets (every key that names one) that other users can read: each a warning at start.
    let sharedSecretFiles: [(flag: String, path: String)]

    init(_ settings: Settings) throws {
        storage = try settings(SettingKeys.storage)
        storageLimits = try StorageLimits(settings)
        disk = try DiskTierSettings(settings)
        listeners = try ListenerSettings(settings)
        access = try ServiceAccessSettings(settings, http: listeners.http, feed: listeners.feed)
        httpLimits = try HTTPLimits(settings)
        pressure = try RealPressure(settings)
        xmpp = try XMPPSettings(settings)
        events = try EventStreamConfiguration(settings)
        replicas = try ReplicaSettings(settings, hasXMPPSource: xmpp.jid != nil)
        stream = try StreamLimits(settings)
        let level = try settings(SettingKeys.logLevel)
        guard let logLevel = Logger.Level(rawValue: level) else {
            throw ValidationError("unknown --log-level \(level)")
        }
        self.logLevel = logLevel
        environmentNotices = settings.environmentNotices
        sharedSecretFiles = SettingKeys.serve.filter(\.namesSecretFile).compactMap { key in
            guard let path = settings.text(of: key), SecretFile(path: path, option: "--\(key.name)").isShared else {
                return nil
            }
            return ("--\(key.name)", path)
        }
        if storage.hasDiskTier && disk.dataDirectory == nil {
            throw ValidationError("--storage \(storage) keeps its disk tier in --data-dir: give one")
        }
    }
}
