import HTTPTypes
import Hummingbird
import NIOCore

/// A file compiled into the binary and served as it is written: the people page's three files and the OpenAPI
/// document. Each is answered with an entity tag of its bytes, so a client revalidates (`Cache-Control: no-cache`)
/// and gets 304 while its copy is this binary's.
struct CompiledFile: Sendable {
    let bytes: [UInt8]
    private let contentType: String
    private let tag: String

    init(_ bytes: [UInt8], _ contentType: String) {
        self.bytes = bytes
        self.contentType = contentType
        tag = EntityTag.of(bytes)
    }

    /// The file, or 304 when the client's copy is this one.
    func answer(_ request: Request) -> Response {
        var headers: HTTPFields = [.cacheControl: "no-cache", .eTag: tag]
        if EntityTag.isFresh(request, tag: tag) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

extension CompiledFile {
    /// The API's OpenAPI document (`OpenAPI/openapi.yaml`), the same file for every deployment: what a deployment's
    /// flags decide (tokens, batch and stream limits) the document says as such, so no deployment serves a copy of
    /// its own.
    static let openAPIDocument = CompiledFile(PackageResources.openapi_yaml, "application/yaml; charset=utf-8")
}
