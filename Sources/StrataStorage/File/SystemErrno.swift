// SystemErrno: a typed errno, and the mapping from a failed system call to a StrataError.
//
// Owns: the translation of errno values into `StrataError` codes (ENOSPC/EDQUOT → .diskFull,
// the rest → .io). Must never swallow an error or retry anything but EINTR.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import StrataCore

/// An `errno` value returned by a system call, with its C name and message.
public struct SystemErrno: Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    public static let interrupted = SystemErrno(EINTR)
    public static let ioError = SystemErrno(EIO)
    public static let noSpace = SystemErrno(ENOSPC)
    public static let wouldBlock = SystemErrno(EAGAIN)
    public static let accessDenied = SystemErrno(EACCES)
    public static let noSuchFile = SystemErrno(ENOENT)

    /// The current thread's `errno`.
    static var current: SystemErrno { SystemErrno(errno) }

    public var description: String {
        let message = strerror(rawValue).map { String(cString: $0) } ?? "unknown error"
        return "errno \(rawValue): \(message)"
    }

    /// The StrataError for a failed `operation` on `path`.
    func strataError(_ operation: String, path: String, file: String = #fileID, line: Int = #line) -> StrataError {
        let code: StrataError.Code
        #if canImport(Darwin)
        code = (rawValue == ENOSPC || rawValue == EDQUOT) ? .diskFull : .io
        #else
        code = (rawValue == ENOSPC || rawValue == EDQUOT) ? .diskFull : .io
        #endif
        return StrataError(code, "\(operation) failed on \(path)", cause: self, file: file, line: line)
    }
}
