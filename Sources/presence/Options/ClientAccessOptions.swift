import ArgumentParser
import LoopbackHTTP

/// How a client reaches a service that requires a token (`serve --api-token-file`) or speaks TLS
/// (`serve --tls-cert`): the bearer token, and the certificates to trust for an `https://` server.
struct ClientAccessOptions: ParsableArguments {
    @Option(
        name: .customLong("token-file"),
        help: "File whose first line is the bearer token for a service started with --api-token-file.")
    var tokenFile: String?

    @Option(
        name: .customLong("ca-file"),
        help: "PEM certificates to trust for an https:// server instead of the system's (a private CA).")
    var caFile: String?

    /// The request headers that carry the token; none without a token file.
    func headers() throws -> [String: String] {
        guard let tokenFile else { return [:] }
        let token = try SecretFile(path: tokenFile, option: "--token-file").firstLine()
        return ["Authorization": "Bearer \(token)"]
    }

    /// Plain TCP for `http://`, verified TLS for `https://`.
    func transport(for server: ServerAddress) throws -> ClientTransport {
        guard server.secure else {
            if caFile != nil { throw ValidationError("--ca-file is for an https:// server") }
            return .plain
        }
        return ClientTransport(tls: true, caFile: caFile)
    }
}
