import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// Strong `ETag`s for the bodies the service serves whole (badges, the people page), so that a cache that asks
/// again gets a 304 while nothing changed.
enum EntityTag {
    /// The first 12 bytes of the body's SHA-256, quoted.
    static func of(_ bytes: [UInt8]) -> String {
        "\"" + SHA256.hash(data: bytes).prefix(12).map { String(format: "%02x", $0) }.joined() + "\""
    }

    /// Whether the request's `If-None-Match` names `tag` (or `*`).
    static func isFresh(_ request: Request, tag: String) -> Bool {
        guard let header = request.headers[.ifNoneMatch] else { return false }
        return header.split(separator: ",").contains {
            let candidate = $0.trimmingCharacters(in: .whitespaces)
            return candidate == tag || candidate == "*"
        }
    }
}
