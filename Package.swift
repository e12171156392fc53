// swift-tools-version: 6.0
// Strata: Core Data for every platform Swift runs on, over a storage engine of its own.
// No package dependencies: the toolchain (Foundation, Dispatch, Synchronization, XCTest) only.
import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "StrataStorage", targets: ["StrataStorage"]),
        .library(name: "Strata", targets: ["Strata"]),
        .executable(name: "storectl", targets: ["storectl"]),
        .executable(name: "quakes", targets: ["quakes"]),
    ],
    targets: [
        .target(name: "StrataStorage"),
        .target(name: "Strata", dependencies: ["StrataStorage"]),
        .executableTarget(name: "storectl", dependencies: ["StrataStorage", "Strata"]),
        .executableTarget(
            name: "quakes",
            dependencies: ["Strata"],
            path: "Sources/quakes",
            resources: [.copy("Resources/sample-feed.geojson")]
        ),
        .executableTarget(
            name: "strata-demo",
            dependencies: ["StrataStorage"],
            path: "Sources/strata-demo"
        ),

        // Test-only helpers shared by every test target (fault-injecting files, oracles, seeds).
        .target(
            name: "_StrataTestSupport",
            dependencies: ["StrataStorage"],
            path: "Tests/_StrataTestSupport"
        ),
        // A second process for the multi-process tests.
        .executableTarget(
            name: "strata-test-helper",
            dependencies: ["StrataStorage", "Strata"],
            path: "Tests/strata-test-helper"
        ),
        .testTarget(
            name: "StrataStorageTests",
            dependencies: ["StrataStorage", "_StrataTestSupport", "strata-test-helper"]
        ),
        .testTarget(name: "StrataTests", dependencies: ["Strata", "_StrataTestSupport", "strata-test-helper", "quakes"], resources: [.copy("Fixtures")]),
        .testTarget(name: "storectlTests", dependencies: ["storectl", "StrataStorage", "Strata", "_StrataTestSupport"]),
    ]
)
