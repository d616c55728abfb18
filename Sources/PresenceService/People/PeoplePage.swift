import HTTPTypes
import Hummingbird
import NIOCore

/// The people page the service serves at `/`: a searchable list of everyone with live status dots, status text
/// and attendance, grouped by domain (or the department a JID's domain names), fed by the change stream; and a
/// storage panel. Three static files (`people.html`, `people.js`, `people.css` beside this one) compiled into the
/// binary: no CDN, no build step, nothing to install.
enum PeoplePage {
    private struct File {
        let bytes: [UInt8]
        let contentType: String
        let tag: String

        init(_ bytes: [UInt8], _ contentType: String) {
            self.bytes = bytes
            self.contentType = contentType
            tag = EntityTag.of(bytes)
        }
    }

    private static let files: [String: File] = [
        "/": File(PackageResources.people_html, "text/html; charset=utf-8"),
        "/people.js": File(PackageResources.people_js, "text/javascript; charset=utf-8"),
        "/people.css": File(PackageResources.people_css, "text/css; charset=utf-8"),
    ]

    static func add(to router: Router<ServiceRequestContext>) {
        for (path, file) in files {
            router.get(RouterPath(path)) { request, _ -> Response in
                var headers: HTTPFields = [.cacheControl: "no-cache", .eTag: file.tag]
                if EntityTag.isFresh(request, tag: file.tag) {
                    return Response(status: .notModified, headers: headers)
                }
                headers[.contentType] = file.contentType
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
            }
        }
    }
}
