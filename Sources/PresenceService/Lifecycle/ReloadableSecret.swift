/// A secret SIGHUP reads again: the `secret` label of `presence_secret_reloads_total`.
enum ReloadableSecret: String, CaseIterable, Sendable {
    case apiTokens = "api-tokens"
    case feedSecret = "feed-secret"
    case tls
}
