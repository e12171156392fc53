import Foundation
import XCTest
import StrataStorage
import _StrataTestSupport

/// Runs the built storectl with `arguments`; returns (exit code, stdout, stderr).
func storectl(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    #if os(macOS)
    let directory = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }!.bundleURL.deletingLastPathComponent()
    #else
    let directory = Bundle.main.bundleURL
    #endif
    process.executableURL = directory.appendingPathComponent("storectl")
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    let error = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: error, as: UTF8.self))
}

/// A store with two trees, one overflow value and a few WAL transactions.
func makeSampleStore() throws -> String {
    let path = temporaryStorePath("storectl")
    let engine = try StorageEngine(path: path)
    try engine.write { tx in
        let quakes = try tx.createTree("quakes")
        for i in 0..<1500 { try quakes.put(key(UInt64(i)), Array("quake \(i)".utf8)) }
        try tx.createTree("regions").put(Array("ca".utf8), [UInt8](repeating: 7, count: 9000))
    }
    try engine.checkpoint()
    try engine.write { tx in try tx.tree("quakes").delete(key(3)) }
    try engine.write { tx in try tx.tree("quakes").put(key(9999), Array("late".utf8)) }
    // Leave the WAL as it is: a process that dies without closing.
    _ = Unmanaged.passRetained(engine)
    return path
}
