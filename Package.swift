// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "PresenceStore",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "XMPPStream", targets: ["XMPPStream"]),
        .library(name: "PresenceStore", targets: ["PresenceStore"]),
        .library(name: "PresenceWorkload", targets: ["PresenceWorkload"]),
        .executable(name: "presence", targets: ["presence"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
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
        // The command-line tool: replay, compare, query, generate.
        .executableTarget(
            name: "presence",
            dependencies: [
                "PresenceStore", "PresenceWorkload", "XMPPStream",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .testTarget(name: "XMPPStreamTests", dependencies: ["XMPPStream"]),
        .testTarget(name: "PresenceCLITests", dependencies: ["presence"]),
        .testTarget(name: "PresenceStoreTests", dependencies: ["PresenceStore", "PresenceWorkload"]),
    ],
    swiftLanguageModes: [.v6]
)
