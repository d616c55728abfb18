// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "PresenceStore",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "XMPPStream", targets: ["XMPPStream"]),
        .library(name: "PresenceStore", targets: ["PresenceStore"]),
        .library(name: "PresenceWorkload", targets: ["PresenceWorkload"]),
        .library(name: "PresenceService", targets: ["PresenceService"]),
        .executable(name: "presence", targets: ["presence"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    ],
    targets: [
        // libexpat from the system, found through pkg-config (`expat`). Never vendored.
        .systemLibrary(
            name: "CExpat",
            pkgConfig: "expat",
            providers: [.apt(["libexpat1-dev"]), .brew(["expat"])]
        ),
        // Streaming XML / XMPP stream parser: knows XML and XMPP streams, nothing about presence.
        .target(name: "XMPPStream", dependencies: ["CExpat"]),
        // JIDs, the presence model, per-user aggregation (and the storages).
        .target(name: "PresenceStore", dependencies: ["XMPPStream"]),
        // Deterministic, realistic presence streams for samples, tests and benchmarks.
        .target(name: "PresenceWorkload", dependencies: ["PresenceStore"]),
        // The running service: TCP feeders in, HTTP queries out. Its own module, so that PresenceStore stays
        // free of SwiftNIO and HTTP.
        .target(
            name: "PresenceService",
            dependencies: [
                "PresenceStore", "XMPPStream",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]),
        // The command-line tool: replay, compare, query, generate, serve, stats.
        .executableTarget(
            name: "presence",
            dependencies: [
                "PresenceStore", "PresenceWorkload", "PresenceService", "XMPPStream",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(name: "XMPPStreamTests", dependencies: ["XMPPStream"]),
        .testTarget(name: "PresenceCLITests", dependencies: ["presence"]),
        .testTarget(name: "PresenceServiceTests", dependencies: ["PresenceService", "PresenceStore", "PresenceWorkload"]),
        .testTarget(name: "PresenceStoreTests", dependencies: ["PresenceStore", "PresenceWorkload"]),
    ],
    swiftLanguageModes: [.v6]
)
