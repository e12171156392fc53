// FileLock: advisory single-byte locks, and what each locked byte protects.
//
// Owns: the `fcntl` lock calls. On Linux these are open-file-description locks (F_OFD_*): owned
// by the handle, released by the kernel when the handle is closed or the process dies, and never
// dropped by the close of some other descriptor on the same file (the classic POSIX-lock trap).
// On other systems it falls back to POSIX record locks, which are per process: there, one
// process must not open the same store twice (documented in FORMAT.md §Locking).
// Must never block: every call is a try; waiting with a timeout is the caller's loop.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

enum ByteLock {
    #if os(Linux)
    // From <fcntl.h> (needs _GNU_SOURCE, so not imported into Swift): Linux 3.15+.
    private static let getLock: Int32 = 36   // F_OFD_GETLK
    private static let setLock: Int32 = 37   // F_OFD_SETLK
    #else
    private static let getLock: Int32 = F_GETLK
    private static let setLock: Int32 = F_SETLK
    #endif

    private static func request(_ type: Int32, byte: Int64) -> flock {
        var lock = flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(byte)
        lock.l_len = 1
        lock.l_pid = 0   // must be 0 for OFD locks
        return lock
    }

    static func tryLock(_ fd: Int32, byte: Int64, exclusive: Bool, path: String) throws -> Bool {
        var lock = request(exclusive ? Int32(F_WRLCK) : Int32(F_RDLCK), byte: byte)
        let result = retryingInterrupts { fcntl(fd, setLock, &lock) }
        if result == 0 { return true }
        let error = SystemErrno.current
        if error.rawValue == EAGAIN || error.rawValue == EACCES { return false }
        throw error.strataError("lock byte \(byte)", path: path)
    }

    static func unlock(_ fd: Int32, byte: Int64, path: String) throws {
        var lock = request(Int32(F_UNLCK), byte: byte)
        if retryingInterrupts({ fcntl(fd, setLock, &lock) }) != 0 {
            throw SystemErrno.current.strataError("unlock byte \(byte)", path: path)
        }
    }

    /// Releases every lock held through `fd` (the whole file).
    static func unlockAll(_ fd: Int32) {
        var lock = flock()
        lock.l_type = Int16(F_UNLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 0
        lock.l_pid = 0
        _ = retryingInterrupts { fcntl(fd, setLock, &lock) }
    }

    /// True if a lock held through another handle would conflict with an exclusive lock here.
    static func isLocked(_ fd: Int32, byte: Int64, path: String) throws -> Bool {
        var lock = request(Int32(F_WRLCK), byte: byte)
        if retryingInterrupts({ fcntl(fd, getLock, &lock) }) != 0 {
            throw SystemErrno.current.strataError("test lock on byte \(byte)", path: path)
        }
        return Int32(lock.l_type) != Int32(F_UNLCK)
    }
}
