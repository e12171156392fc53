// strata-demo: a small tour of the engine on a store in the temporary directory.
import Foundation
import StrataStorage

let usage = "usage: strata-demo [PATH]   (a tour of the engine on a store at PATH, by default in the temporary directory; the store is replaced)"
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(0)
}
if let option = arguments.first(where: { $0.hasPrefix("-") }) {
    FileHandle.standardError.write(Data("strata-demo: unknown option \(option)\n\(usage)\n".utf8))
    exit(2)
}
guard arguments.count <= 1 else {
    FileHandle.standardError.write(Data("strata-demo: expected at most one PATH, got \(arguments.count)\n\(usage)\n".utf8))
    exit(2)
}
let path = arguments.first ?? NSTemporaryDirectory() + "strata-demo.strata"
for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
let engine = try StorageEngine(path: path)
let count = 100_000
let start = Date()
try engine.write { tx in
    let quakes = try tx.openTree("quakes")
    for i in 0..<count {
        var key = UInt64(i).bigEndian
        let k = withUnsafeBytes(of: &key) { Array($0) }
        try quakes.put(k, Array("M\(i % 8).\(i % 10) somewhere \(i)".utf8))
    }
}
print("inserted \(count) in \(Date().timeIntervalSince(start)) s, generation \(try engine.latestGeneration)")
let snapshot = try engine.beginRead()
try engine.write { tx in
    let quakes = try tx.tree("quakes")
    for i in stride(from: 0, to: count, by: 2) {
        var key = UInt64(i).bigEndian
        _ = try quakes.delete(withUnsafeBytes(of: &key) { Array($0) })
    }
}
print("after delete: \(try engine.read { try $0.tree("quakes").count }), snapshot still sees \(try snapshot.tree("quakes").count)")
snapshot.end()
let findings = try engine.check()
print("check: \(findings.isEmpty ? "sound" : findings.map(\.description).joined(separator: "\n"))")
engine.close()
let reopened = try StorageEngine(path: path)
print("reopened: \(try reopened.read { try $0.tree("quakes").count }) records at \(try reopened.latestGeneration)")
print("check after reopen: \(try reopened.check().count) findings")
