// MemoryFileSystem: an in-memory FileSystem with a pessimistic crash model and fault injection.
//
// Owns: file contents as reads see them, the durable contents a power loss would leave (what
// the last successful sync of each file made durable), the durable directory namespace (names
// created or renamed become durable only through `synchronizeDirectory`), per-handle byte
// locks, and injected failures. A power loss drops every unsynced write and every unsynced name,
// optionally tearing or garbling unsynced writes sector by sector (SQLite's crash VFS model).
// After a power loss every old handle throws, as if the process died. Never used by products.

import Foundation
import StrataStorage
import Synchronization

public final class MemoryFileSystem: FileSystem, @unchecked Sendable {
    // @unchecked: every mutable field below is guarded by `lock`.

    /// A file's bytes, shared by every name and handle that refers to it.
    final class Storage {
        var content: [UInt8] = []
        var durable: [UInt8] = []
        /// Writes since the last successful sync, in order: (offset, bytes).
        var unsynced: [(offset: Int, bytes: [UInt8])] = []
        /// Size changes since the last sync.
        var truncatedSinceSync = false
    }

    /// How a power loss treats writes that were not synced.
    public enum PowerLossMode: Sendable {
        /// Every unsynced write is lost.
        case dropUnsynced
        /// Unsynced writes are lost, except a random sector-prefix of the last one (torn page).
        case tearLastWrite
        /// Each 512-byte sector of each unsynced write independently survives, vanishes or is
        /// replaced by garbage (reordering and tearing, as SQLite's crash tests do).
        case randomSectors
    }

    public enum Operation: Sendable, Equatable { case read, write, sync, truncate, open, any }

    /// An injected failure: the `skip + 1`-th matching call (and, if persistent, every later one)
    /// fails with `errno`.
    public struct Fault: Sendable {
        public var operation: Operation
        public var pathSuffix: String?
        public var skip: Int
        public var errno: Int32
        public var persistent: Bool
        public init(_ operation: Operation, pathSuffix: String? = nil, skip: Int = 0, errno: Int32 = EIO, persistent: Bool = false) {
            self.operation = operation
            self.pathSuffix = pathSuffix
            self.skip = skip
            self.errno = errno
            self.persistent = persistent
        }
    }

    let lock = NSLock()
    var names: [String: Storage] = [:]
    var durableNames: [String: Storage] = [:]
    /// Byte locks: path → byte → holders (handle id, exclusive).
    var locks: [ObjectIdentifier: [Int64: [(handle: Int, exclusive: Bool)]]] = [:]
    var faults: [Fault] = []
    var calls: [Operation: Int] = [:]
    var nextHandle = 1
    /// Incremented by each power loss; handles from an earlier life throw.
    var life = 0
    /// Power is cut just before the mutating call with this number (writes, syncs, truncates).
    var powerLossAtMutation: Int?
    var powerLossMode: PowerLossMode = .dropUnsynced
    var mutations = 0
    var random = SeededRandom(seed: 1)
    public private(set) var powerLost = false

    public init() {}

    // MARK: Test controls

    /// Injects a failure.
    public func inject(_ fault: Fault) { lock.withLock { faults.append(fault) } }
    public func clearFaults() { lock.withLock { faults.removeAll() } }
    /// Calls made so far, per operation.
    public func callCount(_ operation: Operation) -> Int { lock.withLock { calls[operation] ?? 0 } }
    /// Mutating calls (write, sync, truncate) made so far.
    public var mutationCount: Int { lock.withLock { mutations } }

    /// Cuts power just before mutating call number `count` (counting from now): that call and
    /// every later one throw EIO, and durable state is what a reboot would see.
    public func schedulePowerLoss(afterMutations count: Int, mode: PowerLossMode, seed: UInt64) {
        lock.withLock {
            powerLossAtMutation = mutations + count
            powerLossMode = mode
            random = SeededRandom(seed: seed)
        }
    }

    /// Cuts power now.
    public func cutPower(mode: PowerLossMode = .dropUnsynced, seed: UInt64 = 1) {
        lock.withLock {
            powerLossMode = mode
            random = SeededRandom(seed: seed)
            applyPowerLoss()
        }
    }

    /// Restores power: old handles stay dead; new opens see the durable state.
    public func reboot() {
        lock.withLock {
            powerLost = false
            powerLossAtMutation = nil
            faults.removeAll()
        }
    }

    /// The current bytes of `path` (for corruption tests).
    public func contents(of path: String) -> [UInt8]? { lock.withLock { names[path]?.content } }

    /// Replaces the bytes of `path`, durably (for corruption tests).
    public func setContents(of path: String, _ bytes: [UInt8]) {
        lock.withLock {
            guard let storage = names[path] else { return }
            storage.content = bytes
            storage.durable = bytes
            storage.unsynced.removeAll()
        }
    }

    /// Must be called with `lock` held.
    private func applyPowerLoss() {
        life += 1
        powerLost = true
        var seen = Set<ObjectIdentifier>()
        for storage in Array(names.values) + Array(durableNames.values) where seen.insert(ObjectIdentifier(storage)).inserted {
            var result = storage.durable
            switch powerLossMode {
            case .dropUnsynced:
                break
            case .tearLastWrite:
                if let last = storage.unsynced.last {
                    let sectors = (last.bytes.count + 511) / 512
                    let keep = random.next(below: sectors + 1) * 512
                    apply(Array(last.bytes.prefix(keep)), at: last.offset, to: &result)
                }
            case .randomSectors:
                for write in storage.unsynced {
                    var sector = 0
                    while sector * 512 < write.bytes.count {
                        let range = (sector * 512)..<min(write.bytes.count, (sector + 1) * 512)
                        switch random.next(below: 3) {
                        case 0: apply(Array(write.bytes[range]), at: write.offset + range.lowerBound, to: &result)
                        case 1: break
                        default: apply((0..<range.count).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: write.offset + range.lowerBound, to: &result)
                        }
                        sector += 1
                    }
                }
            }
            storage.content = result
            storage.durable = result
            storage.unsynced.removeAll()
        }
        names = durableNames
        locks.removeAll()
    }

    private func apply(_ bytes: [UInt8], at offset: Int, to target: inout [UInt8]) {
        if target.count < offset + bytes.count { target += [UInt8](repeating: 0, count: offset + bytes.count - target.count) }
        target.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
    }

    /// Counts a call and throws if a fault or a power loss applies. Must be called with `lock` held.
    func admit(_ operation: Operation, path: String, handleLife: Int) throws {
        if handleLife != life || powerLost {
            throw StrataError(.io, "\(path): the device is gone (simulated power loss)", cause: SystemErrno(EIO))
        }
        calls[operation, default: 0] += 1
        if operation == .write || operation == .sync || operation == .truncate {
            if let at = powerLossAtMutation, mutations >= at {
                applyPowerLoss()
                throw StrataError(.io, "\(path): power lost (simulated)", cause: SystemErrno(EIO))
            }
            mutations += 1
        }
        for (index, fault) in faults.enumerated() where fault.operation == operation || fault.operation == .any {
            if let suffix = fault.pathSuffix, !path.hasSuffix(suffix) { continue }
            if faults[index].skip > 0 {
                faults[index].skip -= 1
                continue
            }
            if !fault.persistent { faults.remove(at: index) }
            let error = SystemErrno(fault.errno)
            throw StrataError(fault.errno == ENOSPC ? .diskFull : .io, "\(path): injected failure of \(operation)", cause: error)
        }
    }

    // MARK: FileSystem

    public func open(_ path: String, create: Bool) throws -> any FileIO {
        try lock.withLock {
            try admit(.open, path: path, handleLife: life)
            if names[path] == nil {
                guard create else { throw StrataError(.io, "open failed on \(path)", cause: SystemErrno.noSuchFile) }
                names[path] = Storage()
            }
            let handle = nextHandle
            nextHandle += 1
            return MemoryFile(fileSystem: self, path: path, storage: names[path]!, handle: handle, life: life)
        }
    }

    public func fileExists(_ path: String) -> Bool { lock.withLock { names[path] != nil } }

    public func remove(_ path: String) throws {
        lock.withLock { _ = names.removeValue(forKey: path) }
    }

    public func rename(_ source: String, to destination: String) throws {
        try lock.withLock {
            guard let storage = names.removeValue(forKey: source) else {
                throw StrataError(.io, "rename failed on \(source)", cause: SystemErrno.noSuchFile)
            }
            names[destination] = storage
        }
    }

    public func linkIfAbsent(_ source: String, to destination: String) throws -> Bool {
        try lock.withLock {
            guard let storage = names[source] else { throw StrataError(.io, "link failed on \(source)", cause: SystemErrno.noSuchFile) }
            if names[destination] != nil { return false }
            names[destination] = storage
            return true
        }
    }

    public func synchronizeDirectory(containing path: String) throws {
        try lock.withLock {
            try admit(.sync, path: parentPath(path), handleLife: life)
            let directory = parentPath(path)
            durableNames = durableNames.filter { parentPath($0.key) != directory }
            for (name, storage) in names where parentPath(name) == directory { durableNames[name] = storage }
        }
    }

    private func parentPath(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }
}

/// A handle on a MemoryFileSystem file.
final class MemoryFile: FileIO, @unchecked Sendable {
    // @unchecked: all state lives in the file system and is guarded by its lock; `closed` too.
    let fileSystem: MemoryFileSystem
    let path: String
    let storage: MemoryFileSystem.Storage
    let handle: Int
    let life: Int
    var closed = false

    init(fileSystem: MemoryFileSystem, path: String, storage: MemoryFileSystem.Storage, handle: Int, life: Int) {
        self.fileSystem = fileSystem
        self.path = path
        self.storage = storage
        self.handle = handle
        self.life = life
    }

    private func admit(_ operation: MemoryFileSystem.Operation) throws {
        if closed { throw StrataError(.closed, "\(path) is closed") }
        try fileSystem.admit(operation, path: path, handleLife: life)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try fileSystem.lock.withLock {
            try admit(.read)
            let start = Int(offset)
            guard start < storage.content.count else { return 0 }
            let count = min(buffer.count, storage.content.count - start)
            storage.content.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + start, byteCount: count) }
            return count
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        try fileSystem.lock.withLock {
            try admit(.write)
            let start = Int(offset)
            let data = [UInt8](bytes)
            if storage.content.count < start + data.count {
                storage.content += [UInt8](repeating: 0, count: start + data.count - storage.content.count)
            }
            storage.content.replaceSubrange(start..<(start + data.count), with: data)
            storage.unsynced.append((start, data))
        }
    }

    func synchronize() throws {
        try fileSystem.lock.withLock {
            try admit(.sync)
            storage.durable = storage.content
            storage.unsynced.removeAll()
        }
    }

    func size() throws -> Int64 {
        try fileSystem.lock.withLock {
            if closed { throw StrataError(.closed, "\(path) is closed") }
            if life != fileSystem.life || fileSystem.powerLost { throw StrataError(.io, "\(path): the device is gone (simulated power loss)") }
            return Int64(storage.content.count)
        }
    }

    func truncate(to size: Int64) throws {
        try fileSystem.lock.withLock {
            try admit(.truncate)
            let n = Int(size)
            if storage.content.count > n {
                storage.content.removeLast(storage.content.count - n)
            } else {
                storage.content += [UInt8](repeating: 0, count: n - storage.content.count)
            }
            // Model: a size change is durable only after a sync, like data.
            storage.unsynced.append((0, []))
        }
    }

    func tryLock(byte: Int64, exclusive: Bool) throws -> Bool {
        try fileSystem.lock.withLock {
            if closed { throw StrataError(.closed, "\(path) is closed") }
            let key = ObjectIdentifier(storage)
            var holders = fileSystem.locks[key, default: [:]][byte, default: []]
            let others = holders.filter { $0.handle != handle }
            if others.contains(where: { $0.exclusive }) || (exclusive && !others.isEmpty) { return false }
            holders.removeAll { $0.handle == handle }
            holders.append((handle, exclusive))
            fileSystem.locks[key, default: [:]][byte] = holders
            return true
        }
    }

    func unlock(byte: Int64) throws {
        fileSystem.lock.withLock {
            let key = ObjectIdentifier(storage)
            fileSystem.locks[key]?[byte]?.removeAll { $0.handle == handle }
        }
    }

    func isLockedByAnotherHandle(byte: Int64) throws -> Bool {
        fileSystem.lock.withLock {
            let key = ObjectIdentifier(storage)
            return fileSystem.locks[key]?[byte]?.contains { $0.handle != handle } ?? false
        }
    }

    func close() {
        fileSystem.lock.withLock {
            if closed { return }
            closed = true
            let key = ObjectIdentifier(storage)
            if var table = fileSystem.locks[key] {
                for byte in table.keys { table[byte]?.removeAll { $0.handle == handle } }
                fileSystem.locks[key] = table
            }
        }
    }
}
