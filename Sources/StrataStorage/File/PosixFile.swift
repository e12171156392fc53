// PosixFile: FileIO over a POSIX file descriptor (Glibc on Linux, Darwin on Apple platforms).
//
// Owns: one file descriptor and the system calls on it. Every call retries EINTR and loops on
// short reads and writes; every failure becomes a StrataError naming the call and the path.
// It must never hold a lock it was not asked for, and never close a descriptor it did not open.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
@_spi(StrataInternal) import StrataCore

/// The file system as the operating system provides it.
public struct PosixFileSystem: FileSystem {
    public init() {}

    public func open(_ path: String, create: Bool) throws -> any FileIO {
        var flags = O_RDWR | O_CLOEXEC
        if create { flags |= O_CREAT }
        let fd = retryingInterrupts { Glibc_or_Darwin_open(path, flags, 0o644) }
        if fd < 0 { throw SystemErrno.current.strataError("open", path: path) }
        return PosixFile(descriptor: fd, path: path)
    }

    public func fileExists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    public func remove(_ path: String) throws {
        if unlink(path) != 0 {
            let error = SystemErrno.current
            if error != .noSuchFile { throw error.strataError("unlink", path: path) }
        }
    }

    public func rename(_ source: String, to destination: String) throws {
        #if canImport(Glibc) || canImport(Musl)
        let result = Glibc.rename(source, destination)
        #else
        let result = Darwin.rename(source, destination)
        #endif
        if result != 0 { throw SystemErrno.current.strataError("rename to \(destination)", path: source) }
    }

    public func linkIfAbsent(_ source: String, to destination: String) throws -> Bool {
        if link(source, destination) == 0 { return true }
        let error = SystemErrno.current
        if error.rawValue == EEXIST { return false }
        throw error.strataError("link to \(destination)", path: source)
    }

    public func synchronizeDirectory(containing path: String) throws {
        let directory = parentDirectory(of: path)
        let fd = retryingInterrupts { Glibc_or_Darwin_open(directory, O_RDONLY | O_CLOEXEC, 0) }
        if fd < 0 { throw SystemErrno.current.strataError("open directory", path: directory) }
        defer { _ = Glibc_or_Darwin_close(fd) }
        if retryingInterrupts({ fsync(fd) }) != 0 {
            throw SystemErrno.current.strataError("fsync directory", path: directory)
        }
    }
}

/// The directory part of `path` ("." when it has none).
func parentDirectory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    if slash == path.startIndex { return "/" }
    return String(path[..<slash])
}

/// A file opened through `PosixFileSystem`.
public final class PosixFile: FileIO {
    public let path: String
    /// The descriptor, closed only in deinit: a call already past its `descriptor()` check on
    /// another thread must never find the number reused for an unrelated file.
    private let fd: Int32
    /// Whether `close()` was called (an atomic flag: every read and write checks it, and a lock
    /// per pread cost a lock and unlock per page read from the file).
    private let closed = Atomic<Bool>(false)
    /// A read-only shared mapping (address, length), unmapped only in deinit so readers that
    /// raced a close never touch unmapped memory. Guarded by `mapping`.
    private let mapping = Lock<(address: UInt, length: Int)?>(nil)

    init(descriptor: Int32, path: String) {
        self.path = path
        self.fd = descriptor
    }

    deinit {
        close()
        _ = Glibc_or_Darwin_close(fd)
        if let (address, length) = mapping.withLock({ $0 }) {
            munmap(UnsafeMutableRawPointer(bitPattern: address), length)
        }
    }

    public func mapSharedReadOnly(length: Int) -> UnsafeRawPointer? {
        mapping.withLock { current -> UnsafeRawPointer? in
            if let current { return UnsafeRawPointer(bitPattern: current.address) }
            guard let fd = try? descriptor(), let size = try? size() else { return nil }
            if size < Int64(length), (try? truncate(to: Int64(length))) == nil { return nil }
            let address = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0)
            guard let address, address != MAP_FAILED else { return nil }
            current = (UInt(bitPattern: address), length)
            return UnsafeRawPointer(address)
        }
    }

    private func descriptor() throws -> Int32 {
        if closed.load(ordering: .acquiring) { throw StrataError(.closed, "\(path) is closed") }
        return fd
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let fd = try descriptor()
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemErrno.current.strataError("pread of \(buffer.count) bytes at offset \(offset)", path: path)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        let fd = try descriptor()
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemErrno.current.strataError("pwrite of \(bytes.count) bytes at offset \(offset)", path: path)
            }
            done += n
        }
    }

    public func synchronize() throws {
        let fd = try descriptor()
        #if canImport(Darwin)
        if retryingInterrupts({ fcntl(fd, F_FULLFSYNC) }) == 0 { return }
        if retryingInterrupts({ fsync(fd) }) != 0 { throw SystemErrno.current.strataError("fsync", path: path) }
        #else
        if retryingInterrupts({ fdatasync(fd) }) != 0 {
            throw SystemErrno.current.strataError("fdatasync", path: path)
        }
        #endif
    }

    public func size() throws -> Int64 {
        let fd = try descriptor()
        var info = stat()
        if fstat(fd, &info) != 0 { throw SystemErrno.current.strataError("fstat", path: path) }
        return Int64(info.st_size)
    }

    public func truncate(to size: Int64) throws {
        let fd = try descriptor()
        if retryingInterrupts({ ftruncate(fd, off_t(size)) }) != 0 {
            throw SystemErrno.current.strataError("ftruncate to \(size) bytes", path: path)
        }
    }

    public func tryLock(byte: Int64, exclusive: Bool) throws -> Bool {
        let fd = try descriptor()
        return try ByteLock.tryLock(fd, byte: byte, exclusive: exclusive, path: path)
    }

    public func unlock(byte: Int64) throws {
        let fd = try descriptor()
        try ByteLock.unlock(fd, byte: byte, path: path)
    }

    public func isLockedByAnotherHandle(byte: Int64) throws -> Bool {
        let fd = try descriptor()
        return try ByteLock.isLocked(fd, byte: byte, path: path)
    }

    /// Refuses further calls and releases every lock this handle holds. The descriptor stays
    /// open (unusable) until the handle is deallocated.
    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { ByteLock.unlockAll(fd) }
    }
}

/// Calls `body` again while it fails with EINTR.
@inline(__always)
func retryingInterrupts(_ body: () -> Int32) -> Int32 {
    while true {
        let result = body()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}

@inline(__always)
private func Glibc_or_Darwin_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Glibc)
    return Glibc.open(path, flags, mode)
    #elseif canImport(Musl)
    return Musl.open(path, flags, mode)
    #else
    return Darwin.open(path, flags, mode)
    #endif
}

@inline(__always)
private func Glibc_or_Darwin_close(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
    return Glibc.close(fd)
    #elseif canImport(Musl)
    return Musl.close(fd)
    #else
    return Darwin.close(fd)
    #endif
}
