import Foundation
import PresenceTestSupport
import Testing

/// `presence serve` with tokens, a feed secret and TLS, as an operator starts it, and the CLI clients against it.
@Suite("Serving beyond loopback: tokens, the feed secret and TLS", .realServers)
struct ServeAccessTests {
    static let token = "cli-token-0123456789abcdef"
    static let secret = "feed secret for the cli test"

    /// A directory of its own, removed afterwards, with the given files (mode 600).
    final class Files {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("presence-access-\(UUID())")

        init(_ files: [String: String]) throws {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for (name, text) in files {
                let path = self[name]
                try text.write(toFile: path, atomically: true, encoding: .utf8)
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            }
        }

        subscript(name: String) -> String { directory.appendingPathComponent(name).path }

        deinit { try? FileManager.default.removeItem(at: directory) }
    }

    /// Runs a Python snippet (an independent client: its `ssl`, `hashlib` and sockets) with `arguments`.
    static func python(_ script: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let drain = PipeDrain(output)
        guard CLI.waitForExit(process, timeout: TestDeadline.processExit) else {
            return (-1, "still running after \(TestDeadline.processExit): \(drain.finish(within: TestDeadline.read))")
        }
        return (process.terminationStatus, drain.finish())
    }

    /// A feeder that opens a component stream, proves the secret and sends one presence: argv host, port, secret,
    /// then TLS CA file or "-" for plain TCP.
    static let componentFeeder = """
        import hashlib, re, socket, ssl, sys
        host, port, secret, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
        raw = socket.create_connection((host, port), timeout=10)
        s = raw if ca == "-" else ssl.create_default_context(cafile=ca).wrap_socket(raw, server_hostname="localhost")
        s.sendall(b"<stream:stream xmlns='jabber:component:accept' xmlns:stream='http://etherx.jabber.org/streams' to='feed.example.com'>")
        answer = b""
        while b"id='" not in answer or not re.search(rb"id='[^']*'", answer):
            answer += s.recv(4096)
        stream_id = re.search(rb"id='([^']*)'", answer).group(1)
        digest = hashlib.sha1(stream_id + secret.encode()).hexdigest()
        s.sendall(b"<handshake>" + digest.encode() + b"</handshake>")
        while b"<handshake/>" not in answer:
            chunk = s.recv(4096)
            if not chunk: sys.exit("closed: " + answer.decode())
            answer += chunk
        s.sendall(b"<presence from='alice@example.com/desk'><show>away</show><status>Lunch</status></presence></stream:stream>")
        s.close()
        print("fed")
        """

    @Test func aRemoteListenerWithoutItsTokensSecretOrTLSIsAUsageErrorThatNamesWhatIsMissing() throws {
        let files = try Files(["tokens": "\(Self.token) ops\n", "short": "sh0rt-s3cret\n"])
        let cases: [([String], String)] = [
            (["--http", "0.0.0.0:0", "--allow-remote"], "--api-token-file"),
            (["--http", "0.0.0.0:0", "--allow-remote", "--api-token-file", files["tokens"]], "--tls-cert"),
            (["--feed", "0.0.0.0:0", "--allow-remote", "--insecure-http"], "--feed-secret-file"),
            (["--tls-cert", files["tokens"]], "--tls-key"),
            (["--api-token-file", files["short"]], "line 1"),
            (["--api-token-file", files["missing"]], "cannot be read"),
        ]
        for (arguments, missing) in cases {
            let result = try CLI.run(["serve"] + arguments, timeout: TestDeadline.processExit)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(missing), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("sh0rt-s3cret"), "a token is never quoted")
        }
    }

    @Test func everySecretFileOthersCanReadIsAWarningNamingItsFlag() async throws {
        let files = try Files(["tokens": "\(Self.token) dashboard\n", "secret": Self.secret + "\n"])
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: files["tokens"])
        let server = try await RunningServer.started([
            "--api-token-file", files["tokens"], "--feed-secret-file", files["secret"],
        ])
        defer { _ = server.stop() }
        #expect(await server.logs("--api-token-file can be read by other users; chmod 600 it"))
        #expect(!server.log.contains("--feed-secret-file can be read"), "a file only its owner reads is fine")
        #expect(!server.log.contains(Self.token), "the warning names the file, never what it holds")
    }

    @Test func withTokensAndAFeedSecretTheClientsPresentTheirTokenAndNoSecretReachesTheLog() async throws {
        let files = try Files([
            "tokens": "\(Self.token) dashboard\n", "secret": Self.secret + "\n", "client-token": Self.token + "\n",
            "wrong-token": "not-the-token-0123456789\n",
        ])
        let server = try await RunningServer.started([
            "--api-token-file", files["tokens"], "--feed-secret-file", files["secret"], "--log-level", "trace",
        ])
        let feedPort = server.feedPort
        let fed = try await onAThreadOfItsOwn {
            try Self.python(Self.componentFeeder, ["127.0.0.1", String(feedPort), Self.secret, "-"])
        }
        #expect(fed.status == 0 && fed.output.contains("fed"), "\(fed.output)")
        let api = "http://127.0.0.1:\(server.httpPort)"
        var answer = CLIResult(status: -1, stdout: "", stderr: "not run", timedOut: false)
        _ = try await eventually {
            answer = try await CLI.run(
                ["query", "--server", api, "--token-file", files["client-token"], "alice@example.com"])
            return answer.stdout.contains("away")
        }
        #expect(answer.status == 0 && answer.stdout.contains("away"), "\(answer.stdout) \(answer.stderr)")
        let stats = try await CLI.run(["stats", "--server", api, "--token-file", files["client-token"]])
        #expect(stats.status == 0 && stats.stdout.contains("updates applied"))
        for arguments in [
            ["query", "--server", api, "alice@example.com"],
            ["query", "--server", api, "--token-file", files["wrong-token"], "alice@example.com"],
            ["stats", "--server", api], ["watch", "--server", api, "alice@example.com"],
        ] {
            let refused = try await CLI.run(arguments, timeout: TestDeadline.processExit)
            #expect(refused.status != 0 && refused.stderr.contains("bearer token"), "\(arguments): \(refused.stderr)")
            #expect(!refused.stdout.contains("away"))
        }
        #expect(await server.stopped() == 0)
        #expect(server.log.contains("presence service running"))
        #expect(!server.log.contains(Self.token), "tokens never reach the log")
        #expect(!server.log.contains(Self.secret), "the feed secret never reaches the log")
        let secretBytes = Array(Self.secret.utf8).map(String.init).joined(separator: ", ")
        #expect(!server.log.contains(secretBytes), "not even as bytes of a printed configuration")
    }

    @Test func overTLSFeedersAndClientsVerifyTheCertificateAndPlainHTTPIsNotAnswered() async throws {
        let files = try Files(["secret": Self.secret + "\n"])
        let authority = try TestCertificateAuthority(directory: files.directory, serverName: "localhost")
        let server = try RunningServer([
            "--tls-cert", authority.serverCertificate.path, "--tls-key", authority.serverKey.path,
            "--feed-secret-file", files["secret"],
        ])
        let fed = try Self.python(
            Self.componentFeeder,
            ["127.0.0.1", String(server.feedPort), Self.secret, authority.certificate.path])
        #expect(fed.status == 0 && fed.output.contains("fed"), "\(fed.output)")
        let https = try Self.python(
            """
            import ssl, sys, time, urllib.request
            context = ssl.create_default_context(cafile=sys.argv[2])
            for _ in range(100):
                body = urllib.request.urlopen(f"https://localhost:{sys.argv[1]}/v1/presence/alice@example.com", context=context).read().decode()
                if "away" in body: break
                time.sleep(0.05)
            print(body)
            try:
                urllib.request.urlopen(f"https://localhost:{sys.argv[1]}/healthz", context=ssl.create_default_context())
                print("UNVERIFIED ACCEPTED")
            except Exception as error:
                print("refused without the CA:", type(error).__name__)
            """, [String(server.httpPort), authority.certificate.path])
        #expect(https.status == 0, "\(https.output)")
        #expect(https.output.contains("\"show\":\"away\""), "\(https.output)")
        #expect(https.output.contains("refused without the CA"), "certificates are verified: \(https.output)")
        let plain = try? await TestHTTP.get(port: server.httpPort, path: "/healthz")
        #expect(plain?.status != 200, "plain HTTP on the TLS port gets no answer")
        // The CLI's own clients over TLS: the private CA with --ca-file, and refused without it.
        let api = "https://localhost:\(server.httpPort)"
        let query = try await CLI.run([
            "query", "--server", api, "--ca-file", authority.certificate.path, "alice@example.com",
        ])
        #expect(query.status == 0 && query.stdout.contains("away"), "\(query.stdout) \(query.stderr)")
        let stats = try await CLI.run(["stats", "--server", api, "--ca-file", authority.certificate.path])
        #expect(stats.status == 0 && stats.stdout.contains("updates applied"), "\(stats.stderr)")
        let untrusted = try await CLI.run(["query", "--server", api, "alice@example.com"])
        #expect(untrusted.status == 1 && !untrusted.stdout.contains("away"))
        #expect(untrusted.stderr.lowercased().contains("certificate"), "\(untrusted.stderr)")
        let watch = Process()
        watch.executableURL = CLI.binary
        watch.arguments = [
            "watch", "--server", api, "--ca-file", authority.certificate.path, "--format", "json", "alice@example.com",
        ]
        let watched = Pipe()
        watch.standardOutput = watched
        watch.standardError = FileHandle.nullDevice
        try watch.run()
        let lines = PipeDrain(watched)
        #expect(await lines.contains("\n"), "watch prints the status it starts from")
        kill(watch.processIdentifier, SIGINT)
        #expect(await onAThreadOfItsOwn { CLI.waitForExit(watch, timeout: TestDeadline.processExit) })
        #expect(lines.text.contains("\"show\":\"away\""), "the change stream over TLS: \(lines.text)")
        #expect(await server.stopped() == 0)
    }
}
