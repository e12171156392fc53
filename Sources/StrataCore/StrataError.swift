// StrataError: the single error type of the product: the engine and the object layer both throw
// it (it lives in StrataCore, which both import; each adds its own `Code` members).
//
// Owns: the error vocabulary (`Code`), the one-line `description` and the cause tree
// (`detailedDescription`). Anything read from disk, typed by a user or returned by a system call
// throws one of these. It must never be used for broken internal invariants: those trap, with
// the values that broke them.

/// An error thrown by Strata, saying what went wrong, where, and what to do.
///
/// Match on ``code`` to handle a family of errors; print the error for a one-line message that
/// names the file, page, tree or generation involved.
///
/// ```swift
/// do {
///     try engine.write { tx in try tx.createTree("quakes") }
/// } catch let error as StrataError where error.code == .busy {
///     print("another process is writing; try later: \(error)")
/// }
/// ```
public struct StrataError: Error, CustomStringConvertible, Sendable {
    /// The family of an error. Extensible: new codes may be added in later versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A file's bytes are not what the format says they must be (bad checksum, impossible
        /// field, truncated file). The message names the file, the page and the field.
        public static let corrupt = Code("corrupt")
        /// Another process (or another engine in this process) holds the write lock and did not
        /// release it within the busy timeout.
        public static let busy = Code("busy")
        /// A read transaction was ended by the engine because it pinned an old generation for
        /// longer than the reader budget allows.
        public static let snapshotTooOld = Code("snapshot too old")
        /// A read transaction was requested at a generation whose pages are no longer retained.
        public static let generationNotRetained = Code("generation not retained")
        /// A system call failed (the cause is the `SystemErrno`).
        public static let io = Code("I/O error")
        /// The disk or quota is full (ENOSPC, EDQUOT).
        public static let diskFull = Code("disk full")
        /// An argument is out of range: a key too long, an empty tree name, a bad page size.
        public static let invalidArgument = Code("invalid argument")
        /// A tree with that name already exists.
        public static let treeExists = Code("tree exists")
        /// No tree with that name exists at this generation.
        public static let treeNotFound = Code("tree not found")
        /// A write failed in a way that leaves the file state uncertain (a failed fsync). The
        /// engine refuses further writes; close and reopen it to recover from the log.
        public static let poisoned = Code("engine poisoned")
        /// The engine was opened read-only, or the operation needs a write transaction.
        public static let readOnly = Code("read-only")
        /// The engine, transaction or cursor was already closed.
        public static let closed = Code("closed")
        /// The file was written by an incompatible format version or is not a Strata file.
        public static let incompatibleFormat = Code("incompatible format")
        /// A cursor or handle was used in a way its state does not allow.
        public static let misuse = Code("misuse")
    }

    /// What kind of error this is.
    public var code: Code
    /// What went wrong, naming the object, file, page or generation involved.
    public var message: String
    /// The underlying error, if any (for example the `SystemErrno` of a failed system call).
    public var cause: (any Error & Sendable)?
    /// Where in Strata's source the error was raised (for bug reports).
    public var location: SourceLocation
    /// The individual errors this one collects (for example every failed validation of one
    /// save, or every merge conflict); empty for a single error.
    public var details: [StrataError] = []

    /// A source position, recorded when an error is created.
    public struct SourceLocation: Sendable, CustomStringConvertible {
        public var file: String
        public var line: Int
        public var description: String { "\(file):\(line)" }
    }

    public init(
        _ code: Code, _ message: String, cause: (any Error & Sendable)? = nil,
        file: String = #fileID, line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.cause = cause
        self.location = SourceLocation(file: file, line: line)
    }

    /// One line: the code, the message and the cause.
    public var description: String {
        if let cause { return "\(code): \(message) (\(cause))" }
        return "\(code): \(message)"
    }

    /// The error and its chain of causes, one per line, with source locations.
    public var detailedDescription: String {
        var lines = ["\(code): \(message) [at \(location)]"]
        var next = cause
        var depth = 1
        while let current = next {
            let indent = String(repeating: "  ", count: depth)
            if let nested = current as? StrataError {
                lines.append("\(indent)caused by \(nested.code): \(nested.message) [at \(nested.location)]")
                next = nested.cause
            } else {
                lines.append("\(indent)caused by \(current)")
                next = nil
            }
            depth += 1
        }
        for detail in details {
            lines.append(contentsOf: detail.detailedDescription.split(separator: "\n").map { "  - " + $0 })
        }
        return lines.joined(separator: "\n")
    }
}
