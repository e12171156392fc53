// AtomicFileWrite: replacing a file's contents so that the old file or the new one is there,
// whole, whatever happens (a crash, a kill, a full disk, power loss).
//
// Owns: the sequence write a temporary file in the same directory, sync it, rename it over the
// target, sync the directory; and the file-system calls it makes, behind `AtomicFileSystem` so
// tests can fail any one of them. A failure before the rename leaves the target untouched and
// removes the temporary file. Never writes the target in place.

import Foundation
import StrataCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(descriptor, buffer, count) }
private func systemClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { read(descriptor, buffer, count) }
private func systemRename(_ from: String, _ to: String) -> Int32 { rename(from, to) }

/// The calls an atomic file write makes (POSIX by default; tests inject failures).
package protocol AtomicFileSystem: Sendable {
    /// Creates `path` (it must not exist) for writing; returns its descriptor.
    func create(_ path: String) throws -> Int32
    func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws
    func sync(_ descriptor: Int32, path: String) throws
    func close(_ descriptor: Int32)
    func rename(_ from: String, _ to: String) throws
    /// Makes the directory's entries durable (the rename).
    func syncDirectory(_ path: String) throws
    func remove(_ path: String)
}

/// The operating system's calls.
package struct POSIXFileSystem: AtomicFileSystem {
    package init() {}

    private static func failure(_ what: String, _ path: String) -> StrataError {
        let code = errno
        let reason = String(cString: strerror(code))
        return StrataError(code == ENOSPC || code == EDQUOT ? .diskFull : .io, "cannot \(what) \(path): \(reason)")
    }

    package func create(_ path: String) throws -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if descriptor < 0 { throw Self.failure("create", path) }
        return descriptor
    }

    package func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw Self.failure("write", path)
            }
            offset += written
        }
    }

    package func sync(_ descriptor: Int32, path: String) throws {
        if fsync(descriptor) != 0 { throw Self.failure("sync", path) }
    }

    package func close(_ descriptor: Int32) { _ = systemClose(descriptor) }

    package func rename(_ from: String, _ to: String) throws {
        if systemRename(from, to) != 0 { throw Self.failure("rename \(from) to", to) }
    }

    package func syncDirectory(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor < 0 { throw Self.failure("open the directory", path) }
        defer { _ = systemClose(descriptor) }
        if fsync(descriptor) != 0 { throw Self.failure("sync the directory", path) }
    }

    package func remove(_ path: String) { _ = unlink(path) }
}

package enum AtomicFileWrite {
    /// Replaces the file at `path` with `bytes`: the old file or the new one stays, whole.
    package static func replace(_ path: String, with bytes: [UInt8], fileSystem: any AtomicFileSystem = POSIXFileSystem()) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporary = directory + "/." + url.lastPathComponent + ".tmp-" + UUID().uuidString.prefix(8)
        let descriptor = try fileSystem.create(temporary)
        do {
            try bytes.withUnsafeBytes { try fileSystem.write(descriptor, $0, path: temporary) }
            try fileSystem.sync(descriptor, path: temporary)
            fileSystem.close(descriptor)
        } catch {
            fileSystem.close(descriptor)
            fileSystem.remove(temporary)
            throw error
        }
        do {
            try fileSystem.rename(temporary, path)
        } catch {
            fileSystem.remove(temporary)
            throw error
        }
        // The rename is the commit point: the new file is in place and every reader gets it.
        // Syncing the directory makes the name durable; a failure there cannot be undone (the
        // old file is gone) and is not reported as a failed save, as SQLite ignores a failed
        // directory sync: the contents were synced before the rename, so after a crash the file
        // is the old one or the new one, whole.
        try? fileSystem.syncDirectory(directory.isEmpty ? "." : directory)
    }

    /// The bytes of the file at `path`, read straight into the array.
    package static func read(_ path: String) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 { throw StrataError(errno == ENOENT ? .invalidArgument : .io, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { _ = systemClose(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw StrataError(.io, "cannot read the size of \(path): \(String(cString: strerror(errno)))") }
        let size = Int(status.st_size)
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            count = 0
            while count < size {
                let got = systemRead(descriptor, buffer.baseAddress! + count, size - count)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if got == 0 { break }
                count += got
            }
        }
        if failure != 0 { throw StrataError(.io, "cannot read \(path): \(String(cString: strerror(failure)))") }
        return bytes
    }
}
