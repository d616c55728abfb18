import HTTPTypes
import Hummingbird
import NIOCore

/// The people page the service serves at `/`: a searchable list of everyone with live status dots, status text
/// and attendance, grouped by domain (or the department a JID's domain names), fed by the change stream; and a
/// storage panel. Three static files (`people.html`, `people.js`, `people.css` beside this one) compiled into the
/// binary: no CDN, no build step, nothing to install.
struct PeoplePage: Sendable {
    private let bytes: [UInt8]
    private let contentType: String
    private let tag: String

    private init(_ bytes: [UInt8], _ contentType: String) {
        self.bytes = bytes
        self.contentType = contentType
        tag = EntityTag.of(bytes)
    }

    static let page = PeoplePage(PackageResources.people_html, "text/html; charset=utf-8")
    static let script = PeoplePage(PackageResources.people_js, "text/javascript; charset=utf-8")
    static let style = PeoplePage(PackageResources.people_css, "text/css; charset=utf-8")

    /// The file, or 304 when the client's copy is this one.
    func answer(_ request: Request) -> Response {
        var headers: HTTPFields = [.cacheControl: "no-cache", .eTag: tag]
        if EntityTag.isFresh(request, tag: tag) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
