import ArgumentParser
import NIOSSL

/// How a client reaches a service that requires a token (`serve --api-token-file`) or speaks TLS
/// (`serve --tls-cert`): the bearer token, the certificates to trust for an `https://` server, and the largest
/// answer it reads.
struct ClientAccessOptions: ParsableArguments {
    static let defaultMaxAnswer = ByteSize(bytes: 64 << 20)
    @Option(
        name: .customLong("token-file"),
        help: "File whose first line is the bearer token for a service started with --api-token-file.")
    var tokenFile: String?

    @Option(
        name: .customLong("ca-file"),
        help: "PEM certificates to trust for an https:// server instead of the system's (a private CA).")
    var caFile: String?

    @Option(
        name: .customLong("max-answer-bytes"),
        help: "Largest answer read from the service: a query's or the statistics' body, one event of a stream (64MiB).")
    var maxAnswerBytes: ByteSize = defaultMaxAnswer

    /// What to say of an answer over ``maxAnswerBytes``.
    func answerTooLarge() -> ValidationFailure {
        ValidationFailure(
            "the service's answer is larger than \(maxAnswerBytes.bytes) bytes (--max-answer-bytes); raise it to read it")
    }

    /// The request headers that carry the token; none without a token file.
    func headers() throws -> [(String, String)] {
        guard let tokenFile else { return [] }
        let token = try SecretFile(path: tokenFile, option: "--token-file").firstLine()
        return [("Authorization", "Bearer \(token)")]
    }

    /// None for `http://`; for `https://`, TLS 1.2 or later that verifies the server's certificate and name,
    /// against the system's trust roots or only `--ca-file`'s certificates.
    func tlsConfiguration(for server: ServerAddress) throws -> TLSConfiguration? {
        guard server.secure else {
            if caFile != nil { throw ValidationError("--ca-file is for an https:// server") }
            return nil
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        if let caFile { configuration.trustRoots = .file(caFile) }
        return configuration
    }
}
