// FileIO: the engine's only window onto files (a small VFS, in the shape of SQLite's os layer).
//
// Owns: the contract every file implementation keeps (positioned reads and writes, sync, size,
// truncate, advisory byte locks). The engine never calls the operating system directly; the
// POSIX implementation lives in PosixFile.swift, and the test support adds an in-memory and a
// fault-injecting one. Implementations must never cache writes across `synchronize()`, and must
// report every failure as a thrown error (never a short write).

/// A random-access file with advisory byte-range locks.
///
/// Locks belong to the handle, not to the process: two handles on the same file (even in one
/// process) exclude each other, and closing one handle never drops the locks of another. That is
/// the semantics of Linux open-file-description locks, which `PosixFile` uses.
///
/// Conform to this protocol to run the engine over your own storage (the test support's
/// fault-injecting file is an example).
import StrataCore

public protocol FileIO: AnyObject, Sendable {
    /// The path the file was opened at, for error messages.
    var path: String { get }

    /// Reads up to `buffer.count` bytes at `offset`. Returns fewer only at end of file.
    /// Wraps `pread(2)`, retrying on EINTR and looping on short reads.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int

    /// Writes all of `bytes` at `offset`, extending the file if needed.
    /// Wraps `pwrite(2)`, retrying on EINTR and looping on short writes.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws

    /// Makes every completed write durable. Wraps `fdatasync(2)` (`F_FULLFSYNC` on Apple platforms).
    /// A failure leaves the durable state unknown: callers must not retry and assume success.
    func synchronize() throws

    /// The file's size in bytes. Wraps `fstat(2)`.
    func size() throws -> Int64

    /// Sets the file's size, cutting or zero-extending. Wraps `ftruncate(2)`.
    func truncate(to size: Int64) throws

    /// Tries to take a lock on the single byte at `byte` (the byte need not exist). Returns false
    /// at once if another handle holds a conflicting lock. Shared locks coexist with each other.
    func tryLock(byte: Int64, exclusive: Bool) throws -> Bool

    /// Releases this handle's lock on `byte` (no effect if it holds none).
    func unlock(byte: Int64) throws

    /// True if a handle other than this one holds any lock on `byte`.
    func isLockedByAnotherHandle(byte: Int64) throws -> Bool

    /// Closes the handle, releasing its locks. Further calls throw `.closed`.
    func close()

    /// Maps the first `length` bytes read-only and shared, so writes through any handle (in any
    /// process) show up in the mapping; nil if this implementation cannot. The file is extended
    /// with zeros to `length` if shorter, and must never be truncated below it afterwards. The
    /// mapping stays valid until the handle is deallocated (not merely closed).
    func mapSharedReadOnly(length: Int) -> UnsafeRawPointer?
}

extension FileIO {
    public func mapSharedReadOnly(length: Int) -> UnsafeRawPointer? { nil }
}

/// Opens, renames and removes files: the directory half of the VFS.
public protocol FileSystem: Sendable {
    /// Opens `path` for reading and writing, creating it (empty) if `create` is true.
    func open(_ path: String, create: Bool) throws -> any FileIO
    /// True if a file exists at `path`.
    func fileExists(_ path: String) -> Bool
    /// Removes the file at `path` (no error if it does not exist).
    func remove(_ path: String) throws
    /// Atomically renames `source` to `destination`, replacing it. Wraps `rename(2)`.
    func rename(_ source: String, to destination: String) throws
    /// Gives the file at `source` the additional name `destination` unless that name exists
    /// (wraps `link(2)`). Returns false if `destination` already existed.
    func linkIfAbsent(_ source: String, to destination: String) throws -> Bool
    /// Makes the directory entry changes (creations, renames) in `path`'s directory durable.
    func synchronizeDirectory(containing path: String) throws
}

extension FileIO {
    /// Reads exactly `buffer.count` bytes at `offset`, or throws `.corrupt` naming what was being
    /// read when the file is too short.
    func readExactly(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, what: @autoclosure () -> String) throws {
        let count = try read(into: buffer, at: offset)
        if count != buffer.count {
            throw StrataError(
                .corrupt,
                "\(path): file ends at byte \(offset + Int64(count)) while reading \(what()) (\(buffer.count) bytes at offset \(offset))"
            )
        }
    }
}
