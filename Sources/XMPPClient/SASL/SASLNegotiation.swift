import Foundation
import XMPPStream

/// SASL authentication of an XMPP client stream (RFC 6120 §6), without I/O: it reads the server's stream
/// features and SASL elements and says what to send, so that any transport (a SwiftNIO channel, a test's
/// socket) can drive it.
///
/// It picks the strongest mechanism both sides have: SCRAM-SHA-256, then SCRAM-SHA-1, then PLAIN only when
/// `allowPlain` (the stream is encrypted, or on loopback), because PLAIN sends the password itself.
public struct SASLNegotiation: Sendable {
    public static let namespace = "urn:ietf:params:xml:ns:xmpp-sasl"

    /// What the transport does next.
    public enum Step: Sendable, Equatable {
        /// Send these bytes and wait for the server's next SASL element.
        case send([UInt8])
        /// Authenticated: restart the stream (RFC 6120 §6.4.6).
        case succeeded
    }

    private let username: String
    private let password: String
    private let allowPlain: Bool
    private var scram: SCRAMClient?
    /// The mechanism chosen by ``start(features:)``.
    public private(set) var mechanism: String?

    public init(username: String, password: String, allowPlain: Bool) {
        self.username = username
        self.password = password
        self.allowPlain = allowPlain
    }

    /// The mechanisms a `<stream:features>` element offers, in the server's order.
    public static func offeredMechanisms(in features: Stanza) -> [String] {
        guard let mechanisms = features.firstChild(of: features.root, named: "mechanisms", in: namespace) else {
            return []
        }
        return features.children(of: mechanisms)
            .filter { features.isElement($0, named: "mechanism", in: namespace) }
            .map { features.text(of: $0).trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// Chooses a mechanism from the server's features and returns the `<auth>` element to send.
    public mutating func start(features: Stanza) throws(SASLFailure) -> [UInt8] {
        try start(mechanisms: SASLNegotiation.offeredMechanisms(in: features))
    }

    /// Chooses from the mechanisms the server offers and returns the `<auth>` element to send.
    public mutating func start(mechanisms offered: [String]) throws(SASLFailure) -> [UInt8] {
        var writer = XMPPWriter()
        if let choice = SCRAMClient.Mechanism.allCases.first(where: { offered.contains($0.rawValue) }) {
            let client: SCRAMClient
            do { client = try SCRAMClient(mechanism: choice, username: username, password: password) } catch {
                throw .scram(error)
            }
            scram = client
            mechanism = choice.rawValue
            writer.element(
                "auth", namespace: SASLNegotiation.namespace, attributes: [("mechanism", choice.rawValue)],
                text: Data(client.initialMessage.utf8).base64EncodedString())
        } else if allowPlain && offered.contains("PLAIN") {
            mechanism = "PLAIN"
            let credentials = Data([0] + Array(username.utf8) + [0] + Array(password.utf8)).base64EncodedString()
            writer.element(
                "auth", namespace: SASLNegotiation.namespace, attributes: [("mechanism", "PLAIN")],
                text: credentials)
        } else {
            throw .noCommonMechanism(offered: offered, plainAllowed: allowPlain)
        }
        return writer.bytes
    }

    /// Handles the server's next SASL element: `<challenge>`, `<success>` or `<failure>`.
    public mutating func receive(_ element: Stanza) throws(SASLFailure) -> Step {
        let root = element.root
        let data = element.text(of: root).trimmingCharacters(in: .whitespacesAndNewlines)
        if element.isElement(root, named: "failure", in: SASLNegotiation.namespace) {
            let condition = element.children(of: root).first {
                !element.isElement($0, named: "text", in: SASLNegotiation.namespace)
            }
            let text = element.firstChild(of: root, named: "text", in: SASLNegotiation.namespace).map {
                element.text(of: $0)
            }
            throw .refused(condition: condition.map { element.localName(of: $0) } ?? "undefined-condition", text: text)
        }
        if element.isElement(root, named: "challenge", in: SASLNegotiation.namespace) {
            guard scram != nil, let challenge = Data(base64Encoded: data).map({ String(decoding: $0, as: UTF8.self) })
            else {
                throw .unexpected("a challenge the chosen mechanism cannot answer")
            }
            let response: String
            do { response = try scram!.respond(to: challenge) } catch { throw .scram(error) }
            var writer = XMPPWriter()
            writer.element(
                "response", namespace: SASLNegotiation.namespace, text: Data(response.utf8).base64EncodedString())
            return .send(writer.bytes)
        }
        if element.isElement(root, named: "success", in: SASLNegotiation.namespace) {
            if let scram {
                guard let final = Data(base64Encoded: data).map({ String(decoding: $0, as: UTF8.self) }) else {
                    throw .unexpected("a success without the server's SCRAM signature")
                }
                do { try scram.verify(serverFinal: final) } catch { throw .scram(error) }
            }
            return .succeeded
        }
        throw .unexpected("<\(element.localName(of: root))> during SASL")
    }
}

/// Why SASL authentication failed.
public enum SASLFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The server offers no mechanism this client may use.
    case noCommonMechanism(offered: [String], plainAllowed: Bool)
    /// The server said `<failure>` with this condition (`not-authorized` for a wrong password or account).
    case refused(condition: String, text: String?)
    /// The SCRAM exchange went wrong on the client's side (including a server that does not know the password).
    case scram(SCRAMError)
    /// The server sent something SASL does not allow here.
    case unexpected(String)

    public var description: String {
        switch self {
        case .noCommonMechanism(let offered, let plainAllowed):
            "no SASL mechanism in common: the server offers \(offered.isEmpty ? "none" : offered.joined(separator: ", "))"
                + (plainAllowed ? "" : " (PLAIN is only used over TLS or on loopback)")
        case .refused(let condition, let text):
            "the server refused the login: \(condition)" + (text.map { " (\($0))" } ?? "")
        case .scram(let error): error.description
        case .unexpected(let what): "unexpected SASL exchange: \(what)"
        }
    }
}
