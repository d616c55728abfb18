// swift-tools-version: 6.1
import PackageDescription

// The benchmarks live in their own package so that building and testing PresenceStore never pulls in
// package-benchmark. Run from the repository root:
//   swift package --package-path Benchmarks benchmark --target IngestBenchmarks
let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "PresenceStore", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // libexpat again, for the reference measurement of expat alone with empty callbacks.
        .systemLibrary(name: "CExpatReference", pkgConfig: "expat", providers: [.apt(["libexpat1-dev"])]),
        .executableTarget(
            name: "IngestBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PresenceIngest", package: "PresenceStore"),
                .product(name: "PresenceStore", package: "PresenceStore"),
                .product(name: "PresenceWorkload", package: "PresenceStore"),
                .product(name: "XMPPStream", package: "PresenceStore"),
                "CExpatReference",
            ],
            path: "Benchmarks/IngestBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "StorageBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "PresenceStore", package: "PresenceStore"),
                .product(name: "PresenceWorkload", package: "PresenceStore"),
            ],
            path: "Benchmarks/StorageBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Resident bytes per user at 1M users: a plain executable, because it measures memory, not time.
        .executableTarget(
            name: "MemoryFootprint",
            dependencies: [
                .product(name: "PresenceIngest", package: "PresenceStore"),
                .product(name: "PresencePressure", package: "PresenceStore"),
                .product(name: "PresenceStore", package: "PresenceStore"),
                .product(name: "PresenceWorkload", package: "PresenceStore"),
            ],
            path: "Benchmarks/MemoryFootprint"
        ),
        // Load on the running service over loopback: sustained ingest with several feeders, and query
        // throughput and latency under that load.
        .executableTarget(
            name: "ServiceLoad",
            dependencies: [
                "LoadSupport",
                .product(name: "PresenceService", package: "PresenceStore"),
                .product(name: "PresenceStore", package: "PresenceStore"),
                .product(name: "PresenceWire", package: "PresenceStore"),
                .product(name: "PresenceWorkload", package: "PresenceStore"),
            ],
            path: "Benchmarks/ServiceLoad"
        ),
        // The XMPP source against a real Prosody: roster snapshot time for N members and sustained changes/s.
        .executableTarget(
            name: "XMPPSourceLoad",
            dependencies: [
                .product(name: "PresenceSource", package: "PresenceStore"),
                .product(name: "PresenceStore", package: "PresenceStore"),
                .product(name: "XMPPClient", package: "PresenceStore"),
                .product(name: "XMPPStream", package: "PresenceStore"),
                .product(name: "PresenceModel", package: "PresenceStore"),
                "LoadSupport",
            ],
            path: "Benchmarks/XMPPSourceLoad"
        ),
        // The periodic resync and the keep-alive on an idle organisation: the server's CPU and probes a second.
        .executableTarget(
            name: "ResyncCost",
            dependencies: [
                "LoadSupport",
                .product(name: "PresenceModel", package: "PresenceStore"),
                .product(name: "PresenceSource", package: "PresenceStore"),
                .product(name: "PresenceStore", package: "PresenceStore"),
                .product(name: "XMPPClient", package: "PresenceStore"),
                .product(name: "XMPPStream", package: "PresenceStore"),
            ],
            path: "Benchmarks/ResyncCost"
        ),
        // Login to ready for an organisation on a real Prosody or ejabberd, with and without the shipped rate
        // limits and the Deploying guide's exemption for the watcher.
        .executableTarget(
            name: "OrganisationReady",
            dependencies: [
                "LoadSupport",
                .product(name: "PresenceModel", package: "PresenceStore"),
                .product(name: "PresenceSource", package: "PresenceStore"),
                .product(name: "PresenceStore", package: "PresenceStore"),
                .product(name: "XMPPClient", package: "PresenceStore"),
                .product(name: "XMPPStream", package: "PresenceStore"),
                .product(name: "PresenceDisk", package: "PresenceStore"),
            ],
            path: "Benchmarks/OrganisationReady"
        ),
        // Refill by probe against a real Prosody with 1,000 members: lookup latency by where the answer comes from,
        // and the probe load evicting storages of several sizes put on the server under a steady query mix.
        .executableTarget(
            name: "ProbeRefillLoad",
            dependencies: [
                "LoadSupport",
                .product(name: "PresenceService", package: "PresenceStore"),
                .product(name: "PresenceSource", package: "PresenceStore"),
                .product(name: "PresenceStore", package: "PresenceStore"),
                .product(name: "PresenceWorkload", package: "PresenceStore"),
                .product(name: "XMPPClient", package: "PresenceStore"),
                .product(name: "XMPPStream", package: "PresenceStore"),
                .product(name: "PresenceModel", package: "PresenceStore"),
            ],
            path: "Benchmarks/ProbeRefillLoad"
        ),
        // The change stream under load: latency from change to delivery with many open streams, and how many
        // streams the service holds, against the release `presence` binary in its own process.
        .executableTarget(
            name: "EventStreamLoad",
            dependencies: [
                "LoadSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/EventStreamLoad"
        ),
        // The soak: the service in its own process with its XMPP source on a real Prosody, feeders, querying
        // clients and change streams at once for ten minutes; resident memory over time and every answer checked.
        .executableTarget(
            name: "Soak",
            dependencies: [
                "LoadSupport",
                .product(name: "PresenceModel", package: "PresenceStore"),
                .product(name: "PresenceWire", package: "PresenceStore"),
                .product(name: "PresenceWorkload", package: "PresenceStore"),
                .product(name: "XMPPClient", package: "PresenceStore"),
                .product(name: "XMPPStream", package: "PresenceStore"),
            ],
            path: "Benchmarks/Soak"
        ),
        // The disk tier's candidate engines side by side: SQLite and LMDB from the system, on the tier's workload.
        .systemLibrary(name: "CSQLiteReference", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLMDBReference", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        .executableTarget(
            name: "DiskEngines", dependencies: ["CSQLiteReference", "CLMDBReference"], path: "Benchmarks/DiskEngines"),
        // The disk tier: ingest with and without it, lookup latency by tier, restart of 1M users, kill -9 in a loop.
        .executableTarget(
            name: "DiskTierLoad",
            dependencies: [
                "LoadSupport",
                .product(name: "PresenceDisk", package: "PresenceStore"),
                .product(name: "PresenceStore", package: "PresenceStore"),
                .product(name: "PresenceWorkload", package: "PresenceStore"),
            ],
            path: "Benchmarks/DiskTierLoad"
        ),
        // Replicas on one watcher, on a real Prosody: each replica's cost to the server, convergence across three,
        // and a replica killed behind the shipped nginx configuration.
        .executableTarget(
            name: "ReplicaLoad",
            dependencies: [
                "LoadSupport",
                .product(name: "PresenceModel", package: "PresenceStore"),
                .product(name: "XMPPClient", package: "PresenceStore"),
                .product(name: "XMPPStream", package: "PresenceStore"),
            ],
            path: "Benchmarks/ReplicaLoad"
        ),
        // What the loads share: a Prosody of their own with N member accounts, `presence serve` in its own process, a
        // keep-alive HTTP client for the measured queries, async-http-client for the rest, raw loopback sockets
        // for the feeders (`LoopbackTCP.swift` is a link to the tests' own), and reporting.
        .target(
            name: "LoadSupport",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServerSentEvents", package: "PresenceStore"),
                .product(name: "PresenceModel", package: "PresenceStore"),
                .product(name: "XMPPClient", package: "PresenceStore"),
                .product(name: "XMPPStream", package: "PresenceStore"),
            ],
            path: "Sources/LoadSupport"),
    ],
    swiftLanguageModes: [.v6]
)
