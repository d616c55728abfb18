import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import PresenceModel
import XMPPClient

/// ejabberd's session table, read through its HTTP API (`mod_http_api`): the command `connected_users_vhost` for
/// the watcher's domain, which lists the full JID of every session there, on every node of a cluster.
///
/// The watcher asks with its own account (HTTP basic authentication with its JID and password, which
/// `mod_http_api` checks against the account), so the operator grants that account this one command in
/// `api_permissions` and nothing more; the Deploying guide has the recipe. The password goes only to an `https`
/// endpoint, whose certificate is verified as the XMPP stream's is, or to a loopback address.
public struct EjabberdSessionDirectory: SessionDirectory {
    /// The API's base, e.g. `https://xmpp.corp.example:5443/api`: the command's name is appended.
    public let endpoint: URL
    /// The virtual host whose sessions are listed: the watcher's domain.
    public let host: String
    /// The largest answer read, in bytes (a session is about 40).
    public let maximumAnswerBytes: Int
    /// The longest a question may take, connection included.
    public let timeout: Duration
    private let account: BareJID
    private let password: String
    private let tls: TLSConfiguration?

    public static let defaultTimeout: Duration = .seconds(30)

    /// The directory of `client`'s server at `endpoint`, asked as `client`'s account, trusting certificates as
    /// `client` does.
    public init(
        endpoint: URL, client: XMPPClientConfiguration, maximumAnswerBytes: Int,
        timeout: Duration = defaultTimeout
    ) throws {
        self.endpoint = endpoint
        host = String(client.account.domainpart)
        account = client.account
        password = client.password
        self.maximumAnswerBytes = maximumAnswerBytes
        self.timeout = timeout
        tls = endpoint.scheme == "https" ? try client.clientTLS() : nil
    }

    public var description: String { "ejabberd connected_users_vhost at \(endpoint.absoluteString)" }

    public func accountsWithSession() async throws -> Set<BareJID> {
        var request = HTTPClientRequest(url: endpoint.appendingPathComponent("connected_users_vhost").absoluteString)
        request.method = .POST
        request.tlsConfiguration = tls
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(
            name: "Authorization", value: "Basic " + Data("\(account):\(password)".utf8).base64EncodedString())
        request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(["host": host])))
        let response: HTTPClientResponse
        do {
            response = try await Self.client.execute(request, timeout: TimeAmount(timeout))
        } catch {
            throw SessionDirectoryError.unreachable("\(error)")
        }
        let body: ByteBuffer
        do {
            body = try await response.body.collect(upTo: maximumAnswerBytes)
        } catch is NIOTooManyBytesError {
            throw SessionDirectoryError.tooLarge(limit: maximumAnswerBytes)
        } catch {
            throw SessionDirectoryError.unreachable("\(error)")
        }
        guard response.status == .ok else {
            throw SessionDirectoryError.refused(
                status: Int(response.status.code), message: Self.errorMessage(in: body))
        }
        guard let sessions = try? JSONDecoder().decode([String].self, from: Data(body.readableBytesView)) else {
            throw SessionDirectoryError.unreadable("not a JSON list of JIDs: \(Self.excerpt(of: body))")
        }
        // A session's full JID; one that does not parse names no roster member.
        return Set(sessions.compactMap { try? JID($0).bare })
    }

    /// The message of ejabberd's error object (`{"status":"error","code":…,"message":…}`), or the body's start.
    private static func errorMessage(in body: ByteBuffer) -> String {
        struct APIError: Decodable { let message: String }
        return (try? JSONDecoder().decode(APIError.self, from: Data(body.readableBytesView)).message) ?? excerpt(of: body)
    }

    private static func excerpt(of body: ByteBuffer) -> String {
        String(decoding: body.readableBytesView.prefix(200), as: UTF8.self)
    }

    /// One client for the process, as async-http-client advises, never shut down (the process ends first); a
    /// redirect is an answer, not followed (the password would go with it).
    private static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10), read: .seconds(30)))
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()
}

/// Why a ``SessionDirectory`` gave no answer.
public enum SessionDirectoryError: Error, Hashable, CustomStringConvertible {
    /// The server answered with an error: `403` when the watcher account is not granted the command.
    case refused(status: Int, message: String)
    /// No answer: the connection failed, TLS did not verify, or the time ran out.
    case unreachable(String)
    /// The answer was larger than the limit.
    case tooLarge(limit: Int)
    /// The answer was not a list of sessions.
    case unreadable(String)

    public var description: String {
        switch self {
        case .refused(403, let message):
            "HTTP 403 (\(message)): grant the watcher account the command connected_users_vhost in api_permissions"
        case .refused(401, let message):
            "HTTP 401 (\(message)): the API did not accept the watcher's JID and password"
        case .refused(let status, let message): "HTTP \(status) (\(message))"
        case .unreachable(let reason): "no answer: \(reason)"
        case .tooLarge(let limit): "the list of sessions is larger than \(limit) bytes (--xmpp-max-stanza-bytes)"
        case .unreadable(let reason): "the answer cannot be read: \(reason)"
        }
    }
}
