import Foundation

/// A certificate authority made for one test with Debian's `openssl`: its certificate (what a client is told to
/// trust) and a server certificate it issued for one name.
package struct TestCertificateAuthority: Sendable {
    package let certificate: URL
    package let serverCertificate: URL
    package let serverKey: URL

    package init(directory: URL, serverName: String) throws {
        certificate = directory.appendingPathComponent("ca.pem")
        serverCertificate = directory.appendingPathComponent("server.pem")
        serverKey = directory.appendingPathComponent("server.key")
        let caKey = directory.appendingPathComponent("ca.key")
        let request = directory.appendingPathComponent("server.csr")
        let extensions = directory.appendingPathComponent("server.ext")
        try "subjectAltName = DNS:\(serverName)\nextendedKeyUsage = serverAuth\n".write(
            to: extensions, atomically: true, encoding: .utf8)
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try TestCertificateAuthority.openssl(
            ["req", "-x509"] + curve + [
                "-keyout", caKey.path, "-out", certificate.path, "-days", "2", "-subj", "/CN=PresenceStore Test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        try TestCertificateAuthority.openssl(
            ["req"] + curve + ["-keyout", serverKey.path, "-out", request.path, "-subj", "/CN=\(serverName)"])
        try TestCertificateAuthority.openssl([
            "x509", "-req", "-in", request.path, "-CA", certificate.path, "-CAkey", caKey.path, "-CAcreateserial",
            "-out", serverCertificate.path, "-days", "2", "-extfile", extensions.path,
        ])
    }

    private static func openssl(_ arguments: [String]) throws {
        guard try Tool.run("/usr/bin/openssl", arguments) == 0 else {
            throw ProsodyServer.Failure(description: "openssl \(arguments.first ?? "") failed")
        }
    }
}
