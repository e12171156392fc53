// storectl: inspect and check Strata stores from the command line.
//
// Owns: the verb table, usage text and the exit-code contract: 0 success, 1 the store has
// problems or cannot be opened, 2 bad arguments. Errors are one line on stderr, never a trace.
// One verb per file (DumpCommand.swift, CheckCommand.swift, StatsCommand.swift, ExplainCommand.swift,
// HistoryCommand.swift, ConvertCommand.swift, CodegenCommand.swift, SyncStatusCommand.swift).

import Foundation
import StrataStorage
import StrataAtomicStores
import StrataGraph

/// A storectl verb.
protocol Command: Sendable {
    static var name: String { get }
    static var summary: String { get }
    static var usage: String { get }
    /// Runs with the parsed arguments; returns the exit code.
    static func run(_ arguments: Arguments) throws -> Int32
}

enum StoreCtl {
    static let commands: [any Command.Type] = [DumpCommand.self, CheckCommand.self, StatsCommand.self, ExplainCommand.self, HistoryCommand.self,
                                               ConvertCommand.self, CodegenCommand.self, SyncStatusCommand.self]

    static var usage: String {
        var text = "usage: storectl <command> PATH [options]\n\ncommands:\n"
        for command in commands { text += "  \(command.usage)\n      \(command.summary)\n" }
        return text
    }

    static func main() -> Int32 {
        let raw = Array(CommandLine.arguments.dropFirst())
        guard let verb = raw.first else {
            printError(usage)
            return 2
        }
        if verb == "--help" || verb == "-h" || verb == "help" {
            print(usage, terminator: "")
            return 0
        }
        guard let command = commands.first(where: { $0.name == verb }) else {
            printError("storectl: unknown command '\(verb)' (try: \(commands.map { $0.name }.joined(separator: ", ")))")
            return 2
        }
        let rest = Array(raw.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            print("usage: storectl \(command.usage)\n  \(command.summary)")
            return 0
        }
        do {
            let arguments = try Arguments(rest)
            return try command.run(arguments)
        } catch let error as ArgumentError {
            printError("storectl \(verb): \(error.message)\nusage: storectl \(command.usage)")
            return 2
        } catch let error as StrataError {
            printError("storectl \(verb): \(error)")
            return 1
        } catch {
            printError("storectl \(verb): \(error)")
            return 1
        }
    }

    /// Opens an existing store for inspection.
    static func openStore(_ path: String) throws -> StorageEngine {
        var options = StorageOptions()
        options.createIfMissing = false
        options.readOnly = true
        options.busyTimeout = 10
        return try StorageEngine(path: path, options: options)
    }
}

extension StoreCtl {
    /// What kind of store file `path` is, from its first bytes (nil: not one Strata knows).
    static func fileKind(_ path: String) throws -> FileKind? {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw StrataError(.io, "cannot open \(path)") }
        defer { try? handle.close() }
        return FileKind.of([UInt8](try handle.read(upToCount: 256) ?? Data()))
    }
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
}

exit(StoreCtl.main())
