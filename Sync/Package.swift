// swift-tools-version: 6.1
// StrataSync: a Strata store shared across machines through PostgreSQL, as Core Data's
// NSPersistentCloudKitContainer shares one through CloudKit. A separate package: the one place
// the product family takes a package dependency (postgres-nio); `Strata` itself keeps none.
import Foundation
import PackageDescription

// A path dependency is named after its directory: the product's checkout may have any name.
let product = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "StrataSync",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StrataSync", targets: ["StrataSync"]),
        // The Earthquakes example with its store shared: `quakes` plus `--sync URL [--zone NAME]`.
        .executable(name: "quakes-sync", targets: ["quakes-sync"]),
        // Test support, not API: the test model and workload, and a throwaway PostgreSQL cluster,
        // for the benchmarks package (strata-bench sync).
        .library(name: "StrataSyncTestSupport", targets: ["StrataSyncTestSupport"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
    ],
    targets: [
        .target(
            name: "StrataSync",
            dependencies: [
                .product(name: "Strata", package: product),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .executableTarget(
            name: "quakes-sync",
            dependencies: ["StrataSync", .product(name: "QuakesExample", package: product), .product(name: "Strata", package: product)]
        ),
        // Test-only: the test model and random workload, shared with the helper process.
        .target(
            name: "StrataSyncTestSupport",
            dependencies: [.product(name: "Strata", package: product)],
            path: "Tests/StrataSyncTestSupport"
        ),
        // A synced store in a process of its own (multi-process and kill -9 tests).
        .executableTarget(
            name: "strata-sync-helper",
            dependencies: ["StrataSync", "StrataSyncTestSupport", .product(name: "Strata", package: product)],
            path: "Tests/strata-sync-helper"
        ),
        .testTarget(
            name: "StrataSyncTests",
            dependencies: ["StrataSync", "StrataSyncTestSupport", "strata-sync-helper", "quakes-sync", .product(name: "storectl", package: product), .product(name: "quakes", package: product),
                           .product(name: "Strata", package: product),
                           .product(name: "PostgresNIO", package: "postgres-nio")]
        ),
    ]
)
