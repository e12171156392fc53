// Arguments: a tiny hand-rolled argument parser (no swift-argument-parser: zero dependencies).
//
// Owns: splitting arguments into positionals, boolean flags and valued options. Must never
// accept an option the command did not declare: `require(...)` rejects leftovers.

struct ArgumentError: Error {
    let message: String
}

struct Arguments {
    private(set) var positionals: [String] = []
    private var flags: Set<String> = []
    private var values: [String: String] = [:]
    private var consumed: Set<String> = []

    /// Options that take a value.
    static let valued: Set<String> = ["--tree", "--entity", "--sort", "--limit", "--after", "--author", "--to", "--type", "--model", "--output", "--access", "--text"]

    init(_ raw: [String]) throws {
        var index = 0
        while index < raw.count {
            let item = raw[index]
            if item.hasPrefix("--") {
                if Arguments.valued.contains(item) {
                    guard index + 1 < raw.count else { throw ArgumentError(message: "\(item) needs a value") }
                    values[item] = raw[index + 1]
                    index += 2
                    continue
                }
                flags.insert(item)
            } else {
                positionals.append(item)
            }
            index += 1
        }
    }

    mutating func flag(_ name: String) -> Bool {
        consumed.insert(name)
        return flags.contains(name)
    }

    mutating func value(_ name: String) -> String? {
        consumed.insert(name)
        return values[name]
    }

    /// PATH and one more positional (named `second` in errors), after checking options.
    func pathAndOne(_ second: String) throws -> (String, String) {
        try checkOptions()
        guard positionals.count == 2 else {
            throw ArgumentError(message: positionals.isEmpty ? "missing PATH" : "expected PATH and \(second), got \(positionals.count) arguments")
        }
        return (positionals[0], positionals[1])
    }

    private func checkOptions() throws {
        let unknown = flags.union(values.keys).subtracting(consumed)
        if let first = unknown.sorted().first { throw ArgumentError(message: "unknown option \(first)") }
    }

    /// The single PATH positional, after checking nothing undeclared was given.
    func path() throws -> String {
        try checkOptions()
        guard positionals.count == 1 else {
            throw ArgumentError(message: positionals.isEmpty ? "missing PATH" : "expected one PATH, got \(positionals.count) arguments")
        }
        return positionals[0]
    }
}
