import ArgumentParser
import LoopbackHTTP

/// `http://host:port` or `https://host:port` of a running service.
struct ServerAddress: ExpressibleByArgument {
    let host: String
    let port: Int
    /// `https://`: TLS, with the server's certificate verified.
    let secure: Bool

    init?(argument: String) {
        var rest = Substring(argument)
        secure = rest.hasPrefix("https://")
        if rest.hasPrefix("http://") { rest = rest.dropFirst(7) }
        if secure { rest = rest.dropFirst(8) }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        guard let address = HostAndPort(argument: String(rest)) else { return nil }
        host = address.host
        port = address.port
    }

    /// GETs a path with the token and over the transport `access` gives; a connection failure or a non-200 answer
    /// is an error for the user (exit 1 with the reason).
    func get(_ path: String, access: ClientAccessOptions) throws -> LoopbackHTTPClient.Response {
        let (headers, transport) = (try access.headers(), try access.transport(for: self))
        let response: LoopbackHTTPClient.Response
        do {
            response = try LoopbackHTTPClient.get(
                host: host, port: port, path: path, headers: headers, transport: transport)
        } catch {
            throw ValidationFailure("cannot reach the service at \(host):\(port): \(error)")
        }
        if response.status == 401 {
            throw ValidationFailure(
                "the service needs a valid bearer token (--token-file): \(String(decoding: response.body, as: UTF8.self))"
            )
        }
        guard response.status == 200 else {
            throw ValidationFailure(
                "the service answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
        return response
    }
}

struct ValidationFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
