// FileChangeMonitor: the operating-system half of the commit watcher: a thread sleeps in
// `wait` until a watched file changes or `wake()` is called.
//
// Owns: the descriptors of one watch: on Linux an inotify instance watching one path (re-added
// when the file is replaced) and a non-blocking pipe for `wake()`, both polled by `wait`; on
// Apple platforms a dispatch file-system source on an O_EVTONLY descriptor and a semaphore; on
// other systems the semaphore alone. Descriptors are closed only in deinit, so a `wake()` racing
// the waiter's exit never writes to a reused descriptor number. Must never spin: idle is a
// blocking wait with no timeout; a failed setup degrades to waking on `wake()` only (or, without
// a pipe, to a slow poll), never to an error or a crash. It knows nothing of stores or engines.

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(StrataInternal) import StrataCore

#if canImport(Glibc)

/// Wakes one waiting thread when the watched file changes or `wake()` is called.
///
/// `wait` is called by one thread at a time; `wake` by any thread.
final class FileChangeMonitor: Sendable {
    /// The pipe `wake()` writes a byte to (both ends non-blocking); -1 if it could not be made.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// The inotify instance; -1 when no file is watched.
    private let inotify: Int32
    private let path: String?

    private struct Watch {
        /// The watch descriptor of `path`, -1 while the file is not watched (missing).
        var descriptor: Int32 = -1
        /// The file may have been replaced, moved or deleted: add the watch again.
        var stale = false
    }
    /// Touched by the waiting thread only; guarded by its lock to keep the class Sendable.
    private let watch = Lock(Watch())

    private static let mask = UInt32(IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF)
    /// Events after which the watch may no longer be on the file at `path`.
    private static let replacing = UInt32(IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)

    /// Watches `path` (nil: wake only on `wake()`).
    init(watching path: String?) {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for fd in ends {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
        } else {
            ends = [-1, -1]
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        self.path = path
        inotify = path == nil ? -1 : inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        addWatch()
    }

    deinit {
        for fd in [wakeRead, wakeWrite, inotify] where fd >= 0 { _ = Glibc.close(fd) }
    }

    /// Whether a change of the file made by this process wakes the waiter by itself (the watch
    /// is on the file now): its writer need not call `wake()` as well.
    var seesOwnWrites: Bool {
        inotify >= 0 && watch.withLock { $0.descriptor >= 0 && !$0.stale }
    }

    /// Makes the current or next `wait` return.
    func wake() {
        guard wakeWrite >= 0 else { return }
        var byte: UInt8 = 1
        // A full pipe (EAGAIN) already wakes the waiter.
        _ = Glibc.write(wakeWrite, &byte, 1)
    }

    /// Blocks until the file changed, `wake()` was called, or `timeout` seconds passed (nil:
    /// no limit), then consumes every pending wake-up and file event. May return spuriously.
    func wait(timeout: Double? = nil) {
        addWatchIfStale()
        var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: inotify, events: Int16(POLLIN), revents: 0)]
        var milliseconds: Int32 = timeout.map { Int32((min(max($0, 0), 3600) * 1000).rounded(.up)) } ?? -1
        // Without a pipe, `wake()` cannot interrupt poll: look again every 50 ms.
        if wakeRead < 0 { milliseconds = milliseconds < 0 ? 50 : min(milliseconds, 50) }
        // poll ignores entries with a negative descriptor.
        if poll(&fds, nfds_t(fds.count), milliseconds) < 0, errno != EINTR {
            usleep(10_000)   // never spin on an unexpected failure
            fds[0].revents = Int16(POLLIN)
            fds[1].revents = Int16(POLLIN)
        }
        // Only what poll found ready is read (a commit's round costs two reads, not four).
        if fds[0].revents != 0 { drainPipe() }
        if fds[1].revents != 0 { drainEvents() }
    }

    private func drainPipe() {
        guard wakeRead >= 0 else { return }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            // A read that fills the buffer may have left more.
            while Glibc.read(wakeRead, buffer.baseAddress!, buffer.count) == buffer.count {}
        }
    }

    /// Reads every queued inotify event; notes when the watch must be added again.
    private func drainEvents() {
        guard inotify >= 0 else { return }
        // Aligned for `inotify_event`; large enough for any single event (names are empty here).
        let capacity = 4096
        withUnsafeTemporaryAllocation(byteCount: capacity, alignment: MemoryLayout<inotify_event>.alignment) { raw in
            let buffer = raw.baseAddress!
            while true {
                let count = Glibc.read(inotify, buffer, capacity)
                if count <= 0 { return }   // EAGAIN: drained
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let descriptor = buffer.load(fromByteOffset: offset, as: Int32.self)
                    let mask = buffer.load(fromByteOffset: offset + 4, as: UInt32.self)
                    let nameLength = Int(buffer.load(fromByteOffset: offset + 12, as: UInt32.self))
                    if mask & FileChangeMonitor.replacing != 0 {
                        watch.withLock { w in
                            w.stale = true
                            // IN_IGNORED: the kernel removed this watch.
                            if mask & UInt32(IN_IGNORED) != 0, w.descriptor == descriptor { w.descriptor = -1 }
                        }
                    }
                    offset += MemoryLayout<inotify_event>.size + nameLength
                }
                // A read that left room for another event took every event queued.
                if count + MemoryLayout<inotify_event>.size + Int(NAME_MAX) + 1 <= capacity { return }
            }
        }
    }

    private func addWatchIfStale() {
        guard inotify >= 0 else { return }
        if watch.withLock({ $0.stale || $0.descriptor < 0 }) { addWatch() }
    }

    /// Adds the watch on whatever file is at `path` now. The same file keeps its watch
    /// descriptor; a replacement gets a new one, and the old watch is removed.
    private func addWatch() {
        guard inotify >= 0, let path else { return }
        let descriptor = inotify_add_watch(inotify, path, FileChangeMonitor.mask)
        let old = watch.withLock { w -> Int32 in
            guard descriptor >= 0 else { return -1 }   // missing: retried at the next wait
            defer { w.descriptor = descriptor; w.stale = false }
            return w.descriptor != descriptor ? w.descriptor : -1
        }
        if old >= 0 { _ = inotify_rm_watch(inotify, old) }
    }
}

#else

/// Wakes one waiting thread when the watched file changes (Apple platforms) or `wake()` is
/// called.
///
/// `wait` is called by one thread at a time; `wake` by any thread.
final class FileChangeMonitor: Sendable {
    private let signal = DispatchSemaphore(value: 0)
    private let path: String?

    #if canImport(Darwin)
    private struct Watch {
        var source: (any DispatchSourceFileSystemObject)?
        var device: dev_t = 0
        var inode: ino_t = 0
        /// An event arrived: the file may have been replaced, check before the next wait.
        var changed = false
    }
    /// Guarded by its lock (the dispatch handler and the waiting thread both touch it).
    private let watch = Lock(Watch())
    #endif

    /// Watches `path` (nil: wake only on `wake()`).
    init(watching path: String?) {
        self.path = path
        #if canImport(Darwin)
        if let path { addSource(path) }
        #endif
    }

    deinit {
        #if canImport(Darwin)
        watch.withLock { $0.source }?.cancel()
        #endif
    }

    /// Whether a change of the file made by this process wakes the waiter by itself: not
    /// relied on here (a dispatch source's events are not ordered with the write that made them).
    var seesOwnWrites: Bool { false }

    /// Makes the current or next `wait` return.
    func wake() { signal.signal() }

    /// Blocks until the file changed, `wake()` was called, or `timeout` seconds passed (nil:
    /// no limit), then consumes every pending wake-up. May return spuriously.
    func wait(timeout: Double? = nil) {
        #if canImport(Darwin)
        replaceSourceIfMoved()
        #endif
        if let timeout {
            _ = signal.wait(timeout: .now() + timeout)
        } else {
            signal.wait()
        }
        while signal.wait(timeout: .now()) == .success {}
    }

    #if canImport(Darwin)
    private func fileChanged() {
        watch.withLock { $0.changed = true }
        signal.signal()
    }

    /// After an event (or without a source): watches the file now at `path` if it is not the
    /// watched one (deleted, renamed or replaced).
    private func replaceSourceIfMoved() {
        guard let path else { return }
        let check = watch.withLock { w -> Bool in
            defer { w.changed = false }
            return w.changed || w.source == nil
        }
        guard check else { return }
        var info = stat()
        guard stat(path, &info) == 0 else { return }   // missing: checked again at the next wake
        let same = watch.withLock { $0.source != nil && $0.device == info.st_dev && $0.inode == info.st_ino }
        if !same { addSource(path) }
    }

    private func addSource(_ path: String) {
        let fd = open(path, O_EVTONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            _ = Darwin.close(fd)
            return
        }
        let source = DispatchSource.makeFileSystemObjectSource(
            fileDescriptor: fd, eventMask: [.write, .extend, .attrib, .delete, .rename],
            queue: DispatchQueue.global(qos: .utility))
        source.setEventHandler { [weak self] in self?.fileChanged() }
        source.setCancelHandler { _ = Darwin.close(fd) }
        let old = watch.withLock { w -> (any DispatchSourceFileSystemObject)? in
            defer { w.source = source; w.device = info.st_dev; w.inode = info.st_ino }
            return w.source
        }
        old?.cancel()
        source.resume()
    }
    #endif
}

#endif
