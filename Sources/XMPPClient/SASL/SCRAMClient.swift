import Crypto
import Foundation
import _CryptoExtras

/// The client side of SASL SCRAM (RFC 5802), with SHA-1 or SHA-256 (RFC 7677): the login every XMPP server
/// offers, which never sends the password and proves the server knew it too.
///
/// Drive it with the server's messages, in order: ``initialMessage`` (sent with `<auth>`), then
/// ``respond(to:)`` to the server's first challenge, then ``verify(serverFinal:)`` with the data of the server's
/// `<success>`. Channel binding is not used (`n,,`), as over STARTTLS most servers and clients do.
public struct SCRAMClient: Sendable {
    /// The SASL mechanisms this client can run, strongest first.
    public enum Mechanism: String, Sendable, CaseIterable {
        case sha256 = "SCRAM-SHA-256"
        case sha1 = "SCRAM-SHA-1"

        var digestBytes: Int { self == .sha256 ? 32 : 20 }
    }

    /// The fewest PBKDF2 iterations accepted from a server (RFC 7677 §4): fewer would let whoever reads the
    /// exchange guess the password cheaply, and a server asking for fewer is misconfigured or an attacker.
    public static let minimumIterations = 4096

    public let mechanism: Mechanism
    private let username: String
    private let password: String
    private let clientNonce: String
    private var expectedServerSignature: [UInt8]?

    /// - Parameters:
    ///   - username: the JID's localpart, as the server knows the account.
    ///   - nonce: fresh random text by default; tests pass the RFC's.
    public init(mechanism: Mechanism, username: String, password: String, nonce: String? = nil) throws(SCRAMError) {
        self.mechanism = mechanism
        self.username = try SASLPrep.prepare(username, what: "username")
        self.password = try SASLPrep.prepare(password, what: "password")
        clientNonce = nonce ?? SCRAMClient.randomNonce()
    }

    /// `n,,n=user,r=nonce`: what goes in `<auth mechanism='...'>`, before base64.
    public var initialMessage: String { "n,," + clientFirstBare }

    private var clientFirstBare: String { "n=\(SCRAMClient.escape(username)),r=\(clientNonce)" }

    /// The client's final message for the server's first challenge (`r=...,s=...,i=...`).
    public mutating func respond(to serverFirst: String) throws(SCRAMError) -> String {
        let fields = SCRAMClient.fields(serverFirst)
        if let error = fields["e"] { throw .serverError(error) }
        guard let nonce = fields["r"], let saltText = fields["s"], let iterationText = fields["i"] else {
            throw .malformed("the server's first message lacks r, s or i: \(serverFirst)")
        }
        guard nonce.hasPrefix(clientNonce), nonce.count > clientNonce.count else {
            throw .malformed("the server's nonce does not extend the client's")
        }
        guard let salt = Data(base64Encoded: saltText), !salt.isEmpty else {
            throw .malformed("the salt is not base64")
        }
        guard let iterations = Int(iterationText) else { throw .malformed("the iteration count is not a number") }
        guard iterations >= SCRAMClient.minimumIterations else { throw .tooFewIterations(iterations) }

        let saltedPassword = try saltedPassword(salt: salt, iterations: iterations)
        let clientKey = hmac(saltedPassword, "Client Key")
        let storedKey = hash(clientKey)
        let withoutProof = "c=biws,r=\(nonce)"  // biws = base64("n,,")
        let authMessage = clientFirstBare + "," + serverFirst + "," + withoutProof
        let clientSignature = hmac(storedKey, authMessage)
        let proof = zip(clientKey, clientSignature).map { $0 ^ $1 }
        expectedServerSignature = hmac(hmac(saltedPassword, "Server Key"), authMessage)
        return withoutProof + ",p=" + Data(proof).base64EncodedString()
    }

    /// Checks the server's final message (`v=...`): the server proved it knows the password too.
    public func verify(serverFinal: String) throws(SCRAMError) {
        let fields = SCRAMClient.fields(serverFinal)
        if let error = fields["e"] { throw .serverError(error) }
        guard let expected = expectedServerSignature else {
            throw .malformed("the server finished before its challenge")
        }
        guard let signature = fields["v"].flatMap({ Data(base64Encoded: $0) }) else {
            throw .malformed("the server's final message has no signature")
        }
        guard constantTimeEquals(Array(signature), expected) else { throw .serverSignatureMismatch }
    }

    // MARK: Cryptography

    private func saltedPassword(salt: Data, iterations: Int) throws(SCRAMError) -> [UInt8] {
        do {
            let key = try KDF.Insecure.PBKDF2.deriveKey(
                from: Array(password.utf8), salt: salt, using: mechanism == .sha256 ? .sha256 : .insecureSHA1,
                outputByteCount: mechanism.digestBytes, unsafeUncheckedRounds: iterations)
            return key.withUnsafeBytes { Array($0) }
        } catch {
            throw .malformed("PBKDF2 failed: \(error)")
        }
    }

    private func hmac(_ key: [UInt8], _ message: String) -> [UInt8] { hmac(key, Array(message.utf8)) }

    private func hmac(_ key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        let symmetric = SymmetricKey(data: key)
        switch mechanism {
        case .sha256: return Array(HMAC<SHA256>.authenticationCode(for: message, using: symmetric))
        case .sha1: return Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: symmetric))
        }
    }

    private func hash(_ bytes: [UInt8]) -> [UInt8] {
        switch mechanism {
        case .sha256: return Array(SHA256.hash(data: bytes))
        case .sha1: return Array(Insecure.SHA1.hash(data: bytes))
        }
    }

    private func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return zip(lhs, rhs).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    // MARK: Message syntax

    /// `a=1,b=2` as a map; a value may contain `=`.
    private static func fields(_ message: String) -> [String: String] {
        var fields: [String: String] = [:]
        for part in message.split(separator: ",") {
            guard let equals = part.firstIndex(of: "="), part.distance(from: part.startIndex, to: equals) == 1 else {
                continue
            }
            fields[String(part[..<equals])] = String(part[part.index(after: equals)...])
        }
        return fields
    }

    /// `,` and `=` in a username are written `=2C` and `=3D` (RFC 5802 §5.1).
    private static func escape(_ name: String) -> String {
        name.replacingOccurrences(of: "=", with: "=3D").replacingOccurrences(of: ",", with: "=2C")
    }

    private static func randomNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0 ..< 24).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
        return Data(bytes).base64EncodedString()
    }
}

/// Why a SCRAM login failed on the client's side.
public enum SCRAMError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The server answered something this client cannot read.
    case malformed(String)
    /// The server sent `e=...` (RFC 5802 §7), such as `invalid-proof` or `unknown-user`.
    case serverError(String)
    /// The server asked for fewer PBKDF2 iterations than ``SCRAMClient/minimumIterations``.
    case tooFewIterations(Int)
    /// The server's signature is wrong: it does not know the password, or someone is in between.
    case serverSignatureMismatch
    /// The username or password has characters SASLprep prohibits.
    case prohibitedCharacter(what: String)

    public var description: String {
        switch self {
        case .malformed(let reason): "malformed SCRAM message: \(reason)"
        case .serverError(let error): "the server refused the login: \(error)"
        case .tooFewIterations(let count):
            "the server asked for \(count) PBKDF2 iterations, fewer than \(SCRAMClient.minimumIterations)"
        case .serverSignatureMismatch: "the server's signature does not match: it does not know the password"
        case .prohibitedCharacter(let what): "the \(what) has a character SASLprep prohibits"
        }
    }
}
