// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "PresenceStore",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "XMPPStream", targets: ["XMPPStream"]),
        .library(name: "XMPPClient", targets: ["XMPPClient"]),
        .library(name: "PresenceModel", targets: ["PresenceModel"]),
        .library(name: "PresenceStore", targets: ["PresenceStore"]),
        .library(name: "PresenceDisk", targets: ["PresenceDisk"]),
        .library(name: "PresencePressure", targets: ["PresencePressure"]),
        .library(name: "PresenceIngest", targets: ["PresenceIngest"]),
        .library(name: "PresenceWire", targets: ["PresenceWire"]),
        .library(name: "PresenceWorkload", targets: ["PresenceWorkload"]),
        .library(name: "PresenceSource", targets: ["PresenceSource"]),
        .library(name: "ServerSentEvents", targets: ["ServerSentEvents"]),
        .library(name: "PresenceService", targets: ["PresenceService"]),
        .executable(name: "presence", targets: ["presence"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.0.0"),
        .package(url: "https://github.com/jpsim/Yams", "5.4.0" ..< "7.0.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.0" ..< "5.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.24.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // `swift package generate-documentation --target PresenceStore`: the library's reference, built in CI.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // libexpat from the system, found through pkg-config (`expat`). Never vendored.
        .systemLibrary(
            name: "CExpat",
            pkgConfig: "expat",
            providers: [.apt(["libexpat1-dev"]), .brew(["expat"])]
        ),
        // XMPP streams in and out: the incremental parser on libexpat and the escaping writer. Knows nothing about
        // presence.
        .target(name: "XMPPStream", dependencies: ["CExpat"]),
        // The client side of an XMPP connection on SwiftNIO: STARTTLS (swift-nio-ssl), SASL SCRAM (hashes, HMAC and
        // PBKDF2 from swift-crypto), resource binding, keep-alive, the roster. Knows nothing about storages.
        .target(
            name: "XMPPClient",
            dependencies: [
                "XMPPStream", "PresenceModel",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // JIDs, the presence model and the per-user aggregation: plain values, no I/O, no libexpat.
        .target(name: "PresenceModel"),
        // The storages behind `MemoryStorage`, their loss accounting and change stream. Model + Foundation only:
        // a library user who wants a storage links neither libexpat nor SwiftNIO.
        .target(name: "PresenceStore", dependencies: ["PresenceModel"]),
        // SQLite from the system, found through pkg-config (`sqlite3`). Never vendored.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // The disk tier's file: users and their values in SQLite, so they survive restarts and evictions.
        .target(name: "PresenceDisk", dependencies: ["PresenceModel", "PresenceStore", "CSQLite"]),
        // Where memory pressure comes from: scripted, the process's resident memory, Linux PSI and cgroup events.
        .target(name: "PresencePressure", dependencies: ["PresenceStore"]),
        // Bytes to storage: stanza decoding, the ingest session every source drives, replay and audit.
        .target(
            name: "PresenceIngest", dependencies: ["XMPPStream", "PresenceModel", "PresenceStore", "PresencePressure"]),
        // The JSON wire format, written once: query results, reports, stats and errors.
        .target(
            name: "PresenceWire", dependencies: ["XMPPStream", "PresenceModel", "PresenceStore"]),
        // Presence from an XMPP server: a watcher account's roster and every contact's presence, kept in a
        // storage through the same ingest path as every other source, reconnecting forever; the server's session
        // directory (ejabberd's HTTP API) over async-http-client when it has one.
        .target(
            name: "PresenceSource",
            dependencies: [
                "XMPPClient", "XMPPStream", "PresenceModel", "PresenceStore", "PresenceIngest",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // Deterministic, realistic presence streams for samples, tests and benchmarks.
        .target(name: "PresenceWorkload", dependencies: ["PresenceModel"]),
        // Server-Sent Events (`text/event-stream`) read from a body of `ByteBuffer`s, such as an async-http-client
        // response's: the parser and the `AsyncSequence` of events. `presence watch`, the tests and the benchmarks.
        .target(name: "ServerSentEvents", dependencies: [.product(name: "NIOCore", package: "swift-nio")]),
        // The running service: TCP feeders in, HTTP queries out.
        .target(
            name: "PresenceService",
            dependencies: [
                "PresenceModel", "PresenceStore", "PresencePressure", "PresenceIngest", "PresenceWire", "XMPPStream",
                "PresenceSource",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            // The HTTP API's OpenAPI document (/openapi.yaml) and the people page's files (/), served from the binary.
            resources: [
                .embedInCode("OpenAPI/openapi.yaml"), .embedInCode("People/people.html"),
                .embedInCode("People/people.js"), .embedInCode("People/people.css"),
            ]),
        // The command-line tool: replay, compare, query, generate, serve, stats.
        .executableTarget(
            name: "presence",
            dependencies: [
                "PresenceModel", "PresenceStore", "PresencePressure", "PresenceIngest", "PresenceWire",
                "PresenceWorkload", "PresenceService", "PresenceSource", "XMPPClient", "ServerSentEvents", "XMPPStream",
                "PresenceDisk",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Test fixtures, and the MemoryStorage contract as one function a storage's tests call (as
        // swift-collections' `checkCollection`): a new storage gets the whole contract suite by one call.
        .target(
            name: "PresenceTestSupport",
            dependencies: [
                "PresenceModel", "PresencePressure", "PresenceStore", "ServerSentEvents", "XMPPClient", "XMPPStream",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/PresenceTestSupport"),
        .testTarget(name: "XMPPStreamTests", dependencies: ["XMPPStream"]),
        .testTarget(
            name: "ServerSentEventsTests",
            dependencies: ["ServerSentEvents", .product(name: "NIOCore", package: "swift-nio")]),
        .testTarget(
            name: "XMPPClientTests",
            dependencies: [
                "XMPPClient", "XMPPStream", "PresenceModel", "PresenceSource", "PresenceStore",
                "PresenceDisk", "PresenceTestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            resources: [.copy("Resources/slixmpp_member.py")]),
        .testTarget(name: "PresenceModelTests", dependencies: ["PresenceModel", "PresenceTestSupport"]),
        .testTarget(
            name: "PresenceStoreTests",
            dependencies: [
                "PresenceStore", "PresencePressure", "PresenceIngest", "PresenceWorkload", "PresenceTestSupport",
            ]),
        .testTarget(
            name: "PresenceDiskTests",
            dependencies: ["PresenceDisk", "PresenceStore", "PresenceModel", "PresenceTestSupport"]),
        .testTarget(
            name: "PresenceIngestTests",
            dependencies: [
                "PresenceIngest", "PresenceStore", "PresenceWire", "PresenceWorkload", "PresenceTestSupport",
                "XMPPStream",
            ]),
        .testTarget(
            name: "PresenceServiceTests",
            dependencies: [
                "PresenceService", "PresenceStore", "PresenceIngest", "PresenceWire", "PresenceWorkload",
                "PresenceSource", "XMPPClient", "PresenceModel", "PresenceTestSupport", "ServerSentEvents",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            resources: [.copy("Resources/slixmpp_component.py")]),
        .testTarget(
            name: "PresenceCLITests",
            dependencies: ["presence", "PresenceStore", "PresenceTestSupport", "XMPPClient", "XMPPStream"],
            resources: [
                .copy("Resources/people_page_browser.py"), .copy("Resources/people_page_token_browser.py"),
                .copy("Resources/people_page_failover_browser.py"), .copy("Resources/openapi_validate.py"),
                .copy("Resources/hold_streams.py"), .copy("Resources/people_page_refused_browser.py"),
                .copy("Resources/chromium_browser.py"), .copy("Resources/change_stream_socket.py"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
