import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore

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

    /// The URL of `path` (with its query) on this server; an IPv6 address in brackets.
    func url(_ path: String) -> String {
        "\(secure ? "https" : "http")://\(host.contains(":") ? "[\(host)]" : host):\(port)\(path)"
    }

    /// GETs a path with the token and over the TLS `access` gives, and its whole body; a connection failure or a
    /// non-200 answer is an error for the user (exit 1 with the reason).
    func get(_ path: String, access: ClientAccessOptions) async throws -> [UInt8] {
        let (headers, tls) = (try access.headers(), try access.tlsConfiguration(for: self))
        let status: Int
        let body: [UInt8]
        do {
            let response = try await ServiceClient.get(path, on: self, headers: headers, tls: tls)
            status = Int(response.status.code)
            body = Array(buffer: try await response.body.collect(upTo: access.maxAnswerBytes.bytes))
        } catch is NIOTooManyBytesError {
            throw access.answerTooLarge()
        } catch {
            throw ValidationFailure("cannot reach the service at \(host):\(port): \(error)")
        }
        if status == 401 {
            throw ValidationFailure(
                "the service needs a valid bearer token (--token-file): \(String(decoding: body, as: UTF8.self))")
        }
        guard status == 200 else {
            throw ValidationFailure("the service answered \(status): \(String(decoding: body, as: UTF8.self))")
        }
        return body
    }
}

struct ValidationFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
