// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "gatehouse",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "gatehouse", targets: ["gatehouse"]),
        .library(name: "GatehouseHummingbird", targets: ["GatehouseHummingbird"]),
        // For the micro-benchmarks in bench/micro, a package of their own.
        .library(name: "GatehouseCore", targets: ["GatehouseCore"]),
    ],
    dependencies: [
        // The app SDK, the generated API types and the SDK request signature: their own package.
        .package(path: "client"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
    ],
    targets: [
        .target(
            name: "GatehouseCore",
            dependencies: [
                .product(name: "GatehouseSigning", package: "client"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseStore",
            dependencies: [
                "GatehouseCore",
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // The pool's own errors (no connection could be made), to tell a host that is gone.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Migrations")],
            swiftSettings: swiftSettings
        ),
        // What operators, backends, the SDK and the gateway ask of Gatehouse, over Core and Store and
        // free of HTTP: the server and the command line call the same operations.
        .target(
            name: "GatehouseOperations",
            dependencies: [
                "GatehouseCore",
                "GatehouseStore",
                .product(name: "GatehouseSigning", package: "client"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseServer",
            dependencies: [
                .product(name: "GatehouseAPI", package: "client"),
                "GatehouseCore",
                "GatehouseOperations",
                "GatehouseStore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The console's templates, style and script (served at /console), and the captcha's page.
            resources: [.copy("Console/ConsoleResources"), .copy("Captcha/CaptchaResources")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseHummingbird",
            dependencies: [
                "GatehouseCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "gatehouse",
            dependencies: [
                // Only `serve` imports the server; the operator commands call GatehouseOperations.
                "GatehouseServer",
                "GatehouseOperations",
                "GatehouseStore",
                "GatehouseCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseTestSupport",
            dependencies: [
                "GatehouseStore",
                "GatehouseCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/GatehouseTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseCoreTests",
            dependencies: [
                "GatehouseCore", .product(name: "GatehouseSigning", package: "client"), "GatehouseTestSupport",
                .product(name: "GatehouseTestDevice", package: "client"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseStoreTests",
            dependencies: ["GatehouseStore", "GatehouseCore", "GatehouseTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseServerTests",
            dependencies: [
                "GatehouseServer",
                "GatehouseOperations",
                .product(name: "GatehouseAPI", package: "client"),
                .product(name: "GatehouseClient", package: "client"),
                "GatehouseHummingbird",
                "GatehouseStore",
                "GatehouseTestSupport",
                .product(name: "GatehouseTestDevice", package: "client"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        // Starts the built `gatehouse` executable and drives it with GatehouseClient and real peers.
        .testTarget(
            name: "GatehouseEndToEndTests",
            dependencies: [
                .product(name: "GatehouseClient", package: "client"),
                .product(name: "GatehouseSigning", package: "client"),
                .product(name: "GatehouseTestDevice", package: "client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                "GatehouseCore",
                "GatehouseTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
