// swift-tools-version: 6.0
// Strata: Core Data for every platform Swift runs on, over a storage engine of its own.
// No package dependencies: the toolchain (Foundation, Dispatch, Synchronization, XCTest) only.
import PackageDescription

// Targets that `import Strata` also name the targets it re-exports: SwiftPM rebuilds a target when
// the modules it depends on directly change, not the modules re-exported through them, so an
// incremental build would otherwise link stale code (an umbrella's own module does not change).
let wholeProduct: [Target.Dependency] = ["Strata", "StrataGraph", "StrataNativeStore", "StrataAtomicStores", "StrataSQLiteStore", "StrataSQLiteFormat", "StrataStorage", "StrataText", "StrataCore"]

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "StrataStorage", targets: ["StrataStorage"]),
        .library(name: "Strata", targets: ["Strata"]),
        // Core Data's SQLite files read in pure Swift (the format, and the `.sqlite` store type).
        .library(name: "StrataSQLiteStore", targets: ["StrataSQLiteStore"]),
        .executable(name: "storectl", targets: ["storectl"]),
        .executable(name: "quakes", targets: ["quakes"]),
        // The example's library, for `quakes-sync` (Sync package): the same command, store shared.
        .library(name: "QuakesExample", targets: ["QuakesExample"]),
        .plugin(name: "StrataCodegen", targets: ["StrataCodegen"]),
    ],
    targets: [
        // The dependency graph (README, "Layout"):
        //   StrataCore  <- StrataStorage  <- StrataNativeStore -> StrataGraph -> StrataSQLiteFormat -> StrataCore
        //                                    StrataAtomicStores -> StrataGraph
        //                                    StrataSQLiteStore  -> StrataGraph
        //   StrataText -> StrataCore (full-text search, used by the graph and the stores)
        //   Strata (umbrella) = StrataGraph + StrataNativeStore + StrataAtomicStores + StrataSQLiteStore
        //                       + StrataStorage, re-exported
        // StrataGraph never imports the engine; a store target reaches the graph only through
        // the store protocol (RowStore) and the row types it speaks.
        .target(name: "StrataCore"),
        .target(name: "StrataStorage", dependencies: ["StrataCore"]),
        // SQLite's file format and Core Data's bookkeeping tables, read in pure Swift: below the
        // graph, which reads a Core Data store's model (Z_MODELCACHE) with it.
        .target(name: "StrataSQLiteFormat", dependencies: ["StrataCore"]),
        // Full-text search, store-independent: terms, queries, ranking, snippets.
        .target(name: "StrataText", dependencies: ["StrataCore"]),
        .target(name: "StrataGraph", dependencies: ["StrataSQLiteFormat", "StrataText", "StrataCore"]),
        .target(name: "StrataNativeStore", dependencies: ["StrataGraph", "StrataStorage", "StrataText"]),
        .target(name: "StrataAtomicStores", dependencies: ["StrataGraph", "StrataCore"]),
        // Core Data's SQLite stores as the `.sqlite` store type (re-exports StrataSQLiteFormat).
        .target(name: "StrataSQLiteStore", dependencies: ["StrataGraph", "StrataSQLiteFormat", "StrataCore"]),
        .target(name: "Strata", dependencies: ["StrataGraph", "StrataNativeStore", "StrataAtomicStores", "StrataSQLiteStore", "StrataStorage"]),
        // Managed object classes from Xcode models: the generator, the tool the build plugin
        // runs, and the plugin (`plugins: [.plugin(name: "StrataCodegen", package: "strata")]`).
        .target(name: "StrataCodeGeneration", dependencies: ["StrataGraph", "StrataCore"]),
        .executableTarget(name: "strata-codegen", dependencies: ["StrataCodeGeneration", "StrataGraph", "StrataCore"]),
        .plugin(name: "StrataCodegen", capability: .buildTool(), dependencies: ["strata-codegen"]),
        .executableTarget(name: "storectl", dependencies: wholeProduct + ["StrataCodeGeneration"]),
        .target(
            name: "QuakesExample",
            dependencies: wholeProduct,
            resources: [.copy("Resources/sample-feed.geojson"), .copy("Earthquakes.xcdatamodeld")],
            plugins: [.plugin(name: "StrataCodegen")]
        ),
        .executableTarget(name: "quakes", dependencies: ["QuakesExample"] + wholeProduct),
        .executableTarget(
            name: "strata-demo",
            dependencies: ["StrataStorage"],
            path: "Sources/strata-demo"
        ),

        // Test-only helpers shared by every test target (fault-injecting files, oracles, seeds).
        .target(
            name: "_StrataTestSupport",
            dependencies: ["StrataStorage", "StrataSQLiteFormat", "StrataGraph"],
            path: "Tests/_StrataTestSupport"
        ),
        // A second process for the multi-process tests.
        .executableTarget(
            name: "strata-test-helper",
            dependencies: wholeProduct,
            path: "Tests/strata-test-helper"
        ),
        .testTarget(
            name: "StrataStorageTests",
            dependencies: ["StrataStorage", "_StrataTestSupport", "strata-test-helper"]
        ),
        .testTarget(name: "StrataTests", dependencies: wholeProduct + ["_StrataTestSupport", "strata-test-helper", "quakes", "QuakesExample"], resources: [.copy("Fixtures")]),
        .testTarget(name: "storectlTests", dependencies: wholeProduct + ["storectl", "strata-demo", "strata-codegen", "_StrataTestSupport"]),
        .testTarget(name: "StrataSQLiteStoreTests", dependencies: wholeProduct + ["_StrataTestSupport"], resources: [.copy("Fixtures")]),
        .testTarget(name: "StrataTextTests", dependencies: ["StrataText", "StrataCore", "_StrataTestSupport"]),
        .testTarget(name: "StrataCodeGenerationTests", dependencies: ["StrataCodeGeneration", "StrataGraph", "StrataCore", "strata-codegen", "_StrataTestSupport"]),
    ]
)
