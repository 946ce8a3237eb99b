// swift-tools-version:6.2
import PackageDescription

// GatehouseClient, the SDK for apps, as its own package: no server dependency can reach an app, and
// the platform floor is the client's (iOS 15, macOS 13), not the server's macOS 15. The server's
// package depends on this one by path for the generated API types and the SDK request signature.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "gatehouse-client",
    platforms: [.iOS(.v15), .macOS(.v13)],
    products: [
        .library(name: "GatehouseClient", targets: ["GatehouseClient"]),
        .library(name: "GatehouseAPI", targets: ["GatehouseAPI"]),
        .library(name: "GatehouseSigning", targets: ["GatehouseSigning"]),
        // Hardware attestation in software, for tests where no Secure Enclave is: never in an app.
        .library(name: "GatehouseTestDevice", targets: ["GatehouseTestDevice"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "GatehouseAPI",
            dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .target(
            name: "GatehouseSigning",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatehouseTestDevice",
            dependencies: [
                "GatehouseClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
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
    ]
)
