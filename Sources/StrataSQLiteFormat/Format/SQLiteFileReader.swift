// SQLiteFileReader: a file opened read-only for the SQLite reader: positioned reads and its size.
//
// Owns: one descriptor (closed when the reader is released) and turning short reads and system
// errors into errors naming the file. Never writes, locks or creates anything: a Core Data
// store is read as it lies, and a missing `-wal` is simply no log.

import Foundation
import StrataCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

final class SQLiteFileReader: Sendable {
    let path: String
    private let descriptor: Int32

    /// Opens `path` for reading; nil when it does not exist.
    init?(existing path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw StrataError(.io, "cannot open \(path) for reading: \(String(cString: strerror(errno)))")
        }
        self.path = path
        descriptor = fd
    }

    deinit { close(descriptor) }

    func size() throws -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw StrataError(.io, "cannot read the size of \(path): \(String(cString: strerror(errno)))")
        }
        return Int64(info.st_size)
    }

    /// `count` bytes at `offset`; fewer only where the file ends (the caller checks).
    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw StrataError(.io, "cannot read \(count) bytes at offset \(offset) of \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            done += n
        }
        if done < count { bytes.removeLast(count - done) }
        return bytes
    }
}
