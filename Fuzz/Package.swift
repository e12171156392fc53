// swift-tools-version: 6.0
// Fuzz: coverage-guided fuzzing (libFuzzer) of every reader of outside bytes, in a package of its
// own so that the product is never built with fuzzing instrumentation. One executable holds every
// target; STRATA_FUZZ_TARGET chooses one. Built and run by Scripts/fuzz.sh: every module with
// AddressSanitizer and coverage instrumentation, only this executable linked with libFuzzer:
//   swift build --package-path Fuzz --product strata-fuzz -Xswiftc -sanitize=address \
//       -Xswiftc -sanitize-coverage=edge,indirect-calls,trace-cmp -Xswiftc -use-ld=lld
import PackageDescription

let package = Package(
    name: "StrataFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Strata", path: ".."), .package(path: "../Sync")],
    targets: [
        .executableTarget(
            name: "strata-fuzz",
            dependencies: [
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataStorage", package: "Strata"),
                .product(name: "StrataSQLiteStore", package: "Strata"),
                .product(name: "StrataSync", package: "Sync"),
            ],
            swiftSettings: [.unsafeFlags(["-sanitize=fuzzer,address"])],
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer,address"])]
        ),
    ]
)
