// swift-tools-version: 6.0
// Benchmarks for Strata: a separate package, so the product keeps zero dependencies.
// Compares Strata with SQLite (system libsqlite3), GRDB.swift (the toolkit a Swift developer on Linux
// would use instead) and LMDB (liblmdb, loaded at run time) in one run.
import Foundation
import PackageDescription

// A path dependency is named after its directory: the product's checkout may have any name.
let product = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        // The sync suite: StrataSync, its throwaway PostgreSQL cluster, and postgres-nio alone (COPY) as the peer.
        .package(path: "../Sync"),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // Declarations only: liblmdb is opened with dlopen at run time, so the harness builds
        // without it and says clearly how to install it when it is missing.
        .systemLibrary(name: "CLMDB"),
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                .product(name: "StrataStorage", package: product),
                .product(name: "Strata", package: product),
                .product(name: "StrataSQLiteStore", package: product),
                "CSQLite", "CLMDB",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "StrataSync", package: "Sync"),
                .product(name: "StrataSyncTestSupport", package: "Sync"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
    ]
)
