import HTTPTypes
import Hummingbird
import NIOHTTP1

/// What ``FrontDoor`` reads of a request, from either path's request type: NIOHTTP1's head on the event loop,
/// Hummingbird's request in the router.
protocol FrontDoorRequest {
    /// The method, as far as the API's rules tell methods apart.
    var methodKind: FrontDoorMethod { get }
    /// The path and query, as the request line has them.
    var target: String { get }
    /// The path, without the query.
    var path: Substring { get }
    /// The values of `Authorization`.
    var authorization: [Substring] { get }
    /// The values of `Cookie`.
    var cookies: [Substring] { get }
    /// Whether ``ReadinessConfiguration/acceptStaleHeader`` is there.
    var acceptsStale: Bool { get }
}

/// A request's method, as RFC 9110's rules for this API tell them apart.
enum FrontDoorMethod: Equatable {
    case get, head, options
    /// Any other, by its name.
    case other(String)
}

extension Request: FrontDoorRequest {
    var methodKind: FrontDoorMethod {
        switch method {
        case .get: .get
        case .head: .head
        case .options: .options
        default: .other(method.rawValue)
        }
    }
    var target: String { uri.string }
    var path: Substring { Substring(uri.path) }
    var authorization: [Substring] { headers[values: .authorization].map { $0[...] } }
    var cookies: [Substring] { headers[values: .cookie].map { $0[...] } }
    var acceptsStale: Bool { headers[.presenceAcceptStale] != nil }
}

extension HTTPRequestHead: FrontDoorRequest {
    var methodKind: FrontDoorMethod {
        switch method {
        case .GET: .get
        case .HEAD: .head
        case .OPTIONS: .options
        default: .other(method.rawValue)
        }
    }
    var target: String { uri }
    var path: Substring { uri.utf8.firstIndex(of: UInt8(ascii: "?")).map { uri[..<$0] } ?? uri[...] }
    var authorization: [Substring] { headers["authorization"].map { $0[...] } }
    var cookies: [Substring] { headers["cookie"].map { $0[...] } }
    var acceptsStale: Bool { headers.contains(name: ReadinessConfiguration.acceptStaleHeader) }
}

extension HTTPField.Name {
    /// ``ReadinessConfiguration/acceptStaleHeader``, made once.
    static let presenceAcceptStale = HTTPField.Name(ReadinessConfiguration.acceptStaleHeader)!
}
