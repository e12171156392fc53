// ChildProcess: running a program from a test and reading what it printed.
//
// Owns: starting the process with extra environment variables and collecting its standard output
// and standard error together (one pipe, read to the end before waiting, so a chatty child never
// blocks on a full pipe). Never interprets the output.

import Foundation

/// Runs `executable` (a path, or a name looked up in PATH) with `arguments`; returns its exit
/// status and everything it wrote to standard output and standard error, interleaved.
public func runChildProcess(_ executable: String, _ arguments: [String],
                            environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
    let process = Process()
    if executable.contains("/") {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
    } else {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
    }
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
