// swift-tools-version:6.1
import PackageDescription

// Micro-benchmarks of GatehouseCore (docs/PERFORMANCE.md), a package of their own so that the
// server's build and `swift test` never compile the benchmark tooling.
let package = Package(
    name: "gatehouse-micro-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "gatehouse", path: "../.."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "GatehouseCoreBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "GatehouseCore", package: "gatehouse"),
            ],
            path: "Benchmarks/GatehouseCoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
