// FuzzEntry: libFuzzer's two entry points for every Strata fuzz target in one executable
// (STRATA_FUZZ_TARGET names the target; STRATA_FUZZ_WRITE_SEEDS=DIR writes every target's seed
// inputs into DIR/<target>/ and exits).
//
// Owns: choosing the target and the contract every target keeps: an input is read without
// trapping, and every failure is a thrown `StrataError` (any other error, or a broken invariant
// a target states, stops the run with a message: libFuzzer then saves the input). Never keeps
// state between inputs beyond the scratch directory.

import Foundation
import StrataCore

/// One fuzz target: a name, what it reads, and its seed inputs.
struct FuzzTarget: Sendable {
    let name: String
    let run: @Sendable ([UInt8]) throws -> Void
    let seeds: @Sendable () throws -> [(name: String, bytes: [UInt8])]
}

enum Fuzz {
    nonisolated(unsafe) static var target: FuzzTarget?   // set once, in LLVMFuzzerInitialize, before any input

    static let all: [FuzzTarget] = [
        FuzzTargets.sqliteFile, FuzzTargets.coreDataStore, FuzzTargets.compiledModel, FuzzTargets.propertyList,
        FuzzTargets.xcodeModel, FuzzTargets.predicate, FuzzTargets.binaryStore, FuzzTargets.xmlStore, FuzzTargets.nativeStore,
        FuzzTargets.nativeRecovery, FuzzTargets.walPatches, FuzzTargets.page, FuzzTargets.syncDecoders,
    ]

    /// A directory of this process for the files a target writes (removed at exit).
    static let scratch: URL = {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-fuzz-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "/strata-fuzz-\(getpid())") }
        return url
    }()

    /// Stops the run: the input broke the contract.
    static func violated(_ message: String) -> Never {
        FileHandle.standardError.write(Data("strata-fuzz \(target?.name ?? "?"): \(message)\n".utf8))
        abort()
    }
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    let environment = ProcessInfo.processInfo.environment
    if let directory = environment["STRATA_FUZZ_WRITE_SEEDS"] {
        for target in Fuzz.all {
            let folder = URL(fileURLWithPath: directory).appendingPathComponent(target.name)
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            do {
                for seed in try target.seeds() { try Data(seed.bytes).write(to: folder.appendingPathComponent(seed.name)) }
            } catch {
                FileHandle.standardError.write(Data("strata-fuzz: the seeds of \(target.name) could not be made: \(error)\n".utf8))
                exit(1)
            }
        }
        exit(0)
    }
    guard let name = environment["STRATA_FUZZ_TARGET"], let target = Fuzz.all.first(where: { $0.name == name }) else {
        FileHandle.standardError.write(Data("strata-fuzz: set STRATA_FUZZ_TARGET to one of \(Fuzz.all.map(\.name).joined(separator: ", "))\n".utf8))
        exit(2)
    }
    Fuzz.target = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        try Fuzz.target!.run(bytes)
    } catch is StrataError {
        // A clear error: the contract holds.
    } catch {
        Fuzz.violated("an error that is not a StrataError: \(error)")
    }
    return 0
}

// SwiftPM links an executable's entry point as `<module>_main` (`main` is defined as it), so
// libFuzzer's own `main` is not linked: this one hands the command line to libFuzzer's driver.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

@_cdecl("strata_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var count = argc
    var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in fuzzOneInput(data, size) }
}
