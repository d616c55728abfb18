import Crypto
import Foundation

/// Who may read the query API: the bearer tokens of `--api-token-file`, and the paths open without one.
///
/// Presence is personal data (who is on sick leave, who is in a meeting), so a service reachable from other
/// machines answers only holders of a token. Without tokens (the default on loopback) everything is open. With
/// them, every path needs one but `/healthz` and `/readyz` (for load balancers and orchestrators) and, when asked for,
/// `/metrics` (for a Prometheus that cannot send one), and the people page's own files (markup, script and style,
/// no data; the page asks for a token when its data needs one).
///
/// A token is presented as `Authorization: Bearer <token>` or, for a browser's `EventSource`, which cannot set
/// headers, as the cookie ``cookieName``. Only SHA-256 digests of the tokens are kept, and every digest is compared
/// in constant time, all of them for each request: neither the time nor the answer tells which part was wrong.
/// Tokens are never logged; their names are.
public struct APIAccess: Sendable, CustomStringConvertible, CustomReflectable {
    /// One accepted token.
    struct Token: Sendable {
        var name: String
        var digest: SHA256.Digest
    }

    private let tokens: [Token]
    /// `/metrics` is open without a token.
    public let metricsOpen: Bool

    /// The cookie a browser presents its token in.
    public static let cookieName = "presence_token"
    /// Shorter tokens are refused when the file is read: a token is a secret, not a password to remember.
    public static let minimumTokenLength = 16

    /// Everything open: no token file.
    public static let open = APIAccess(tokens: [], metricsOpen: true)

    private init(tokens: [Token], metricsOpen: Bool) {
        self.tokens = tokens
        self.metricsOpen = metricsOpen
    }

    /// Reads a token file: one token per line, optionally followed by white space and a name that the logs use
    /// instead of the token; empty lines and lines starting with `#` are skipped.
    public init(tokenFile text: String, metricsOpen: Bool = false) throws(TokenFileError) {
        var tokens: [Token] = []
        var line = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            line += 1
            let content = raw.trimmingCharacters(in: .whitespaces.union(.init(charactersIn: "\r")))
            if content.isEmpty || content.hasPrefix("#") { continue }
            let parts = content.split(maxSplits: 1, whereSeparator: { $0 == " " || $0 == "\t" })
            let token = parts[0]
            guard token.utf8.count >= APIAccess.minimumTokenLength else {
                throw TokenFileError(
                    line: line, message: "a token needs at least \(APIAccess.minimumTokenLength) characters")
            }
            // RFC 6750 §2.1's b64token: what a bearer token may be made of.
            guard token.utf8.allSatisfy(APIAccess.isTokenByte) else {
                throw TokenFileError(line: line, message: "a token is made of letters, digits and -._~+/= only")
            }
            let name = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "token \(tokens.count + 1)"
            tokens.append(Token(name: name, digest: SHA256.hash(data: Array(token.utf8))))
        }
        guard !tokens.isEmpty else { throw TokenFileError(line: nil, message: "the file holds no token") }
        self.init(tokens: tokens, metricsOpen: metricsOpen)
    }

    /// How many tokens, never which: the digests stay out of logs too.
    public var description: String {
        requiresToken ? "APIAccess(\(tokens.count) tokens, metrics open: \(metricsOpen))" : "APIAccess(open)"
    }
    public var customMirror: Mirror { Mirror(self, children: [:]) }

    /// Whether a token is needed at all.
    public var requiresToken: Bool { !tokens.isEmpty }

    /// How many tokens are accepted.
    public var tokenCount: Int { tokens.count }

    /// What a request may do.
    public enum Decision: Equatable, Sendable {
        /// No token needed for this path.
        case open
        /// The token of this name was presented.
        case granted(name: String)
        /// No valid token: 401.
        case denied
    }

    /// Decides on a request for data from its `Authorization` and `Cookie` header values (which paths are open without
    /// a token is the route table's, ``ServiceRoute/isOpen(metricsOpen:)``).
    public func authenticate<Value: StringProtocol>(authorization: [Value], cookies: [Value]) -> Decision {
        guard requiresToken else { return .open }
        for value in authorization {
            guard let token = APIAccess.bearerToken(in: Substring(value)) else { continue }
            if let name = match(token) { return .granted(name: name) }
        }
        for header in cookies {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop(while: { $0 == " " })
                guard trimmed.hasPrefix(APIAccess.cookieName + "=") else { continue }
                let value = String(trimmed.dropFirst(APIAccess.cookieName.count + 1))
                let token = Substring(value.removingPercentEncoding ?? value)
                if let name = match(token) { return .granted(name: name) }
            }
        }
        return .denied
    }

    /// The name of the token `candidate` is, comparing it with every token in constant time.
    private func match(_ candidate: Substring) -> String? {
        let digest = SHA256.hash(data: Array(candidate.utf8))
        var found: String?
        for token in tokens where token.digest == digest {  // swift-crypto compares digests in constant time
            found = found ?? token.name
        }
        return found
    }

    /// The token of an `Authorization: Bearer <token>` value (the scheme is case-insensitive, RFC 9110 §11.1).
    static func bearerToken(in value: Substring) -> Substring? {
        let trimmed = value.drop(while: { $0 == " " })
        guard trimmed.count > 7, trimmed.prefix(7).lowercased() == "bearer " else { return nil }
        let token = trimmed.dropFirst(7).drop(while: { $0 == " " })
        return token.isEmpty ? nil : token
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a") ... UInt8(ascii: "z"), UInt8(ascii: "A") ... UInt8(ascii: "Z"),
            UInt8(ascii: "0") ... UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"),
            UInt8(ascii: "/"), UInt8(ascii: "="):
            true
        default: false
        }
    }

    /// A token file that cannot be used, and where; never quotes the token.
    public struct TokenFileError: Error, CustomStringConvertible {
        /// The line at fault, counting from 1; nil when the file as a whole is.
        public var line: Int?
        public var message: String
        public var description: String { line.map { "line \($0): \(message)" } ?? message }
    }
}
