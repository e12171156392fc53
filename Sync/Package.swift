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
        .testTarget(
            name: "StrataSyncTests",
            dependencies: ["StrataSync", .product(name: "Strata", package: product)]
        ),
    ]
)
