import ArgumentParser

/// The bearer token a client presents to a service that requires one (`serve --api-token-file`).
struct ClientCredentialOptions: ParsableArguments {
    @Option(
        name: .customLong("token-file"),
        help: "File whose first line is the bearer token for a service started with --api-token-file.")
    var tokenFile: String?

    /// The request headers that carry the token; none without a token file.
    func headers() throws -> [String: String] {
        guard let tokenFile else { return [:] }
        let token = try SecretFile(path: tokenFile, option: "--token-file").firstLine()
        return ["Authorization": "Bearer \(token)"]
    }
}
