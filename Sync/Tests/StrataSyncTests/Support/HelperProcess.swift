// HelperProcess: strata-sync-helper (or another of the package's executables, quakes-sync) in a
// process of its own (a machine of its own), started, waited for, or killed with SIGKILL.

import Foundation

final class HelperProcess: @unchecked Sendable {
    // @unchecked Sendable: `process` and `pipe` are set at init; `output` is read after the
    // process ended (the reader thread has joined then) or through `outputSoFar`, under `lock`.
    let process = Process()
    private let pipe = Pipe()
    private let lock = NSLock()
    private var collected = Data()
    private let reader: Thread

    init(_ arguments: [String], executable: String = "strata-sync-helper", environment: [String: String] = [:]) throws {
        process.executableURL = Bundle.main.bundleURL.appendingPathComponent(executable)
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.arguments = arguments
        process.standardOutput = pipe
        process.standardError = pipe
        let handle = pipe.fileHandleForReading
        let box = Collector()
        reader = Thread {
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                box.append(data)
            }
            box.finish()
        }
        self.collector = box
        try process.run()
        reader.start()
    }

    private let collector: Collector

    /// What the process printed so far.
    var outputSoFar: String { collector.text }

    /// Waits for the process to end; returns its status and output.
    func wait() async -> (status: Int32, output: String) {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                self.process.waitUntilExit()
                self.collector.waitUntilFinished()
                continuation.resume(returning: (self.process.terminationStatus, self.collector.text))
            }
        }
    }

    /// SIGKILL.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
    }

    /// Waits until the output contains `text` (or the process ended, or `timeout` passed).
    func waitForOutput(_ text: String, timeout: TimeInterval) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if outputSoFar.contains(text) { return true }
            if !process.isRunning { return outputSoFar.contains(text) }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    private final class Collector: @unchecked Sendable {
        // @unchecked Sendable: every property is used under `lock`.
        private let lock = NSCondition()
        private var data = Data()
        private var finished = false
        func append(_ more: Data) { lock.lock(); data.append(more); lock.unlock() }
        func finish() { lock.lock(); finished = true; lock.broadcast(); lock.unlock() }
        func waitUntilFinished() { lock.lock(); while !finished { lock.wait() }; lock.unlock() }
        var text: String { lock.lock(); defer { lock.unlock() }; return String(decoding: data, as: UTF8.self) }
    }
}
