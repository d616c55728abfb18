// swift-tools-version: 6.1
import PackageDescription

// libFuzzer targets, in their own package so that the main build never links libFuzzer. Each target is built
// with `-sanitize=fuzzer,address` (see Fuzz/README.md and Fuzz/run.sh) and needs only the NIO-free modules.
let package = Package(
    name: "PresenceFuzz",
    dependencies: [.package(name: "PresenceStore", path: "..")],
    targets: [
        // libFuzzer's driver entry, declared for Swift; and the one Swift function every target starts it with.
        .target(name: "LibFuzzerDriver"),
        .target(name: "FuzzSupport", dependencies: ["LibFuzzerDriver"]),
        // The streaming parser alone, fed in chunks the input chooses.
        .executableTarget(
            name: "FuzzStreamParser",
            dependencies: ["FuzzSupport", .product(name: "XMPPStream", package: "PresenceStore")]),
        // Bytes → parser → decoder → storages, against a plain model fed the same updates.
        .executableTarget(
            name: "FuzzIngest",
            dependencies: [
                "FuzzSupport",
                .product(name: "XMPPStream", package: "PresenceStore"),
                .product(name: "PresenceModel", package: "PresenceStore"),
                .product(name: "PresenceStore", package: "PresenceStore"),
                .product(name: "PresenceIngest", package: "PresenceStore"),
            ]),
        // JID parsing and normalisation.
        .executableTarget(
            name: "FuzzJID", dependencies: ["FuzzSupport", .product(name: "PresenceModel", package: "PresenceStore")]),
        // The query API's request target: path parameter and query string.
        .executableTarget(
            name: "FuzzQueryTarget",
            dependencies: [
                "FuzzSupport",
                .product(name: "PresenceModel", package: "PresenceStore"),
                .product(name: "PresenceWire", package: "PresenceStore"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
