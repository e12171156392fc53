// StoreSyncLock: one process at a time syncs a store file (SyncDesign.md, "Wake-ups, failures,
// processes"): an advisory lock on `<store>.sync-lock`, held while the engine runs.
//
// Owns: taking and releasing the lock file's `flock`. Never blocks: a lock another process holds
// is reported at once, and the engine tries again later.

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

final class StoreSyncLock: Sendable {
    let path: String
    private let descriptor: Int32

    /// Takes the lock of the store at `storePath`, or throws `.storeLocked`.
    init(storePath: String) throws {
        path = storePath + ".sync-lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw SyncError(.storeLocked, "cannot open the sync lock \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno == EWOULDBLOCK ? "another process is syncing this store" : String(cString: strerror(errno))
            close(fd)
            throw SyncError(.storeLocked, "\(storePath): \(reason) (lock \(path))")
        }
        descriptor = fd
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
