// swift-tools-version: 6.0
// The codegen fixture: a package that uses Strata's StrataCodegen build plugin as an app would,
// built and run by storectlTests' CodegenFixtureTests (`swift build --package-path Tests/CodegenFixture`).
//
// Strata is the package two folders up (or at STRATA_PACKAGE_PATH, for a copy of this fixture);
// SwiftPM names a path dependency after its folder, which differs between checkouts, so the
// manifest works the name out.
import Foundation
import PackageDescription

let strataRoot = Context.environment["STRATA_PACKAGE_PATH"].map { URL(fileURLWithPath: $0) }
    ?? URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().deletingLastPathComponent().standardizedFileURL
let strata = strataRoot.lastPathComponent.lowercased()

let package = Package(
    name: "CodegenFixture",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: strataRoot.path)],
    targets: [
        .executableTarget(
            name: "LibraryApp",
            dependencies: [.product(name: "Strata", package: strata)],
            resources: [.copy("Library.xcdatamodeld")],
            plugins: [.plugin(name: "StrataCodegen", package: strata)]
        ),
    ]
)
