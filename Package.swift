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
        .library(name: "GatehouseClient", targets: ["GatehouseClient"]),
        .library(name: "GatehouseHummingbird", targets: ["GatehouseHummingbird"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
    ],
    targets: [
        .target(
            name: "GatehouseAPI",
            dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .target(
            name: "GatehouseCore",
            dependencies: [
                "GatehouseSigning", .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto"),
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
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Migrations")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseServer",
            dependencies: [
                "GatehouseAPI",
                "GatehouseCore",
                "GatehouseStore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
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
        .target(
            name: "GatehouseSigning",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseClient",
            dependencies: [
                "GatehouseAPI",
                "GatehouseSigning",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                // URLSession on Apple platforms; on Linux the generated client's URLSession transport
                // hangs under FoundationNetworking (seen in this package's tests), so AsyncHTTPClient.
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession", condition: .when(platforms: [.macOS, .iOS])),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "gatehouse",
            dependencies: [
                "GatehouseServer",
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
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/GatehouseTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatehouseCoreTests",
            dependencies: ["GatehouseCore", "GatehouseSigning", "GatehouseTestSupport"],
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
                "GatehouseClient",
                "GatehouseHummingbird",
                "GatehouseStore",
                "GatehouseTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
