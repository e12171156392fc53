// SharedState: the `-shm` file through which processes sharing a store coordinate
// (FORMAT.md §Shared state and §Locking).
//
// Owns: the shared header (latest committed state, WAL position and epoch), the reader slots,
// and the lock bytes: the writer lock and one liveness byte per reader slot. The file is never
// synced: after a crash it is rebuilt from the WAL under the writer lock. Every field is read
// with pread and validated by a checksum; a torn read is retried. Must never hold a lock while
// the engine is idle: the writer lock only for a write transaction, a slot byte only while the
// process has a live reader (plus a short linger).

import Foundation

/// Where each field of the shared header lies (FORMAT.md §14): the ONLY place its offsets are
/// written; the codec below reads and writes through these names.
enum SharedHeaderField {
    static let magic = 0              // 8 bytes, "STRATAsh"
    static let version = 8            // u32
    static let pageSize = 12          // u32
    static let storeID = 16           // 16 bytes
    static let walSalt = 32           // u32
    static let committedFrames = 36   // u32
    static let walEpoch = 40          // u64
    static let walBaseGeneration = 48 // u64
    static let changeCounter = 56     // u64
    static let intactFrom = 64        // u64
    static let committedChain = 72    // u32 (76..<80 reserved)
    static let meta = 80              // StoreMeta.encodedSize bytes
    static let checksum = 508         // u32, of bytes 0..<508
}

/// The shared header: what every process needs to see the latest commit.
struct SharedHeader: Equatable, Sendable {
    static let magic: [UInt8] = Array("STRATAsh".utf8)
    static let version: UInt32 = 1
    static let encodedSize = 512
    static let checksumOffset = SharedHeaderField.checksum

    var pageSize: Int
    var storeID: UUID
    var walSalt: UInt32
    var committedFrames: Int
    var walEpoch: UInt64
    var walBaseGeneration: Generation
    var changeCounter: UInt64
    var intactFrom: Generation
    var committedChain: UInt32
    var meta: StoreMeta

    var encoded: [UInt8] {
        typealias F = SharedHeaderField
        var bytes = [UInt8](repeating: 0, count: SharedHeader.encodedSize)
        bytes.withUnsafeMutableBytes { raw in
            let p = raw.baseAddress!
            (p + F.magic).copyMemory(from: SharedHeader.magic, byteCount: 8)
            p.setU32(F.version, SharedHeader.version)
            p.setU32(F.pageSize, UInt32(pageSize))
            withUnsafeBytes(of: storeID.uuid) { (p + F.storeID).copyMemory(from: $0.baseAddress!, byteCount: 16) }
            p.setU32(F.walSalt, walSalt)
            p.setU32(F.committedFrames, UInt32(committedFrames))
            p.setU64(F.walEpoch, walEpoch)
            p.setU64(F.walBaseGeneration, walBaseGeneration.rawValue)
            p.setU64(F.changeCounter, changeCounter)
            p.setU64(F.intactFrom, intactFrom.rawValue)
            p.setU32(F.committedChain, committedChain)
            meta.encode(into: p, at: F.meta)
            p.setU32(F.checksum, Checksum.of(UnsafeRawPointer(p), count: F.checksum))
        }
        return bytes
    }

    static func decode(_ raw: UnsafeRawBufferPointer, path: String) -> SharedHeader? {
        typealias F = SharedHeaderField
        let p = raw.baseAddress!
        guard memcmp(p + F.magic, magic, 8) == 0, p.u32(F.version) == version,
              p.u32(F.checksum) == Checksum.of(p, count: F.checksum),
              let meta = try? StoreMeta.decode(p, at: F.meta, where: path),
              p.u64(F.walBaseGeneration) < Generation.limit, p.u64(F.intactFrom) < Generation.limit else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(start: p + F.storeID, count: 16)) }
        return SharedHeader(
            pageSize: Int(p.u32(F.pageSize)), storeID: UUID(uuid: uuid), walSalt: p.u32(F.walSalt),
            committedFrames: Int(p.u32(F.committedFrames)), walEpoch: p.u64(F.walEpoch), walBaseGeneration: Generation(p.u64(F.walBaseGeneration)),
            changeCounter: p.u64(F.changeCounter), intactFrom: Generation(p.u64(F.intactFrom)), committedChain: p.u32(F.committedChain), meta: meta)
    }
}

/// A read-only shared mapping of the shared file's header and reader slots.
struct MappedBytes: @unchecked Sendable {
    // @unchecked: the memory is read-only to this process and stays mapped until the file
    // handle is deallocated (PosixFile.deinit), which outlives the SharedState holding this.
    let base: UnsafeRawPointer
}

/// One reader slot: a process's oldest pinned generation.
/// Where each field of a reader slot lies (FORMAT.md §14): the ONLY place its offsets are written.
enum ReaderSlotField {
    static let state = 0        // u32: 0 free, 1 active, 2 evicted
    static let processID = 4    // u32
    static let generation = 8   // u64: the oldest generation the process pins
    static let since = 16       // u64 (24..<64 reserved)
}

struct ReaderSlot: Equatable, Sendable {
    static let size = 64
    static let count = 128
    static let tableOffset = 512

    enum State: UInt32 { case free = 0, active = 1, evicted = 2 }

    var state: State
    var processID: Int32
    var generation: Generation
    var since: UInt64

    static let free = ReaderSlot(state: .free, processID: 0, generation: .zero, since: 0)
}

/// The shared file, its header, slots and locks.
final class SharedState: Sendable {
    let file: any FileIO
    /// The header and slot table mapped read-only, when the file system supports it: lets a read
    /// transaction check the change counter, and a writer scan the slots, without system calls.
    private let mapped: MappedBytes?
    /// Lock byte of the writer lock; slot i's liveness byte is `slotLockBase + i`.
    static let writerLockByte: Int64 = 1 << 16
    static let slotLockBase: Int64 = (1 << 16) + 1
    /// The header and the whole slot table, rounded up to pages.
    static let mappedLength = 12288

    init(file: any FileIO) {
        self.file = file
        self.mapped = file.mapSharedReadOnly(length: SharedState.mappedLength).map(MappedBytes.init)
    }

    /// The header, or nil if the file holds none (new, or never completed). A checksum mismatch
    /// is retried, since a writer may be rewriting it right now.
    func readHeader() throws -> SharedHeader? {
        var buffer = [UInt8](repeating: 0, count: SharedHeader.encodedSize)
        for attempt in 0..<200 {
            let count = try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: 0) }
            if count < SharedHeader.encodedSize { return nil }
            if let header = buffer.withUnsafeBytes({ SharedHeader.decode($0, path: file.path) }) { return header }
            if buffer.withUnsafeBytes({ memcmp($0.baseAddress!, SharedHeader.magic, 8) }) != 0 { return nil }
            if attempt > 20 { usleep(100) }
        }
        return nil
    }

    /// Just the change counter (8 bytes at offset 56): the cheap "did anything change?" probe.
    /// A torn read can only look changed (then the full header is read) or look like the older
    /// value (then this reader simply begins before that commit).
    func readChangeCounter() throws -> UInt64? {
        if let mapped {
            // An aligned 8-byte load: atomic on the hardware Swift supports; the kernel writes
            // these bytes (pwrite), never Swift code in this process, so there is no Swift race.
            return UInt64(littleEndian: mapped.base.load(fromByteOffset: SharedHeaderField.changeCounter, as: UInt64.self))
        }
        var value: UInt64 = 0
        let count = try withUnsafeMutableBytes(of: &value) { try file.read(into: $0, at: Int64(SharedHeaderField.changeCounter)) }
        return count == 8 ? UInt64(littleEndian: value) : nil
    }

    func writeHeader(_ header: SharedHeader) throws {
        try header.encoded.withUnsafeBytes { try file.write($0, at: 0) }
    }

    // MARK: Writer lock

    /// Takes the writer lock, retrying with backoff until `timeout` seconds pass.
    func lockWriter(timeout: Double, storePath: String) throws {
        let deadline = monotonicSeconds() + timeout
        var pause: UInt32 = 200
        while true {
            if try file.tryLock(byte: SharedState.writerLockByte, exclusive: true) { return }
            if monotonicSeconds() >= deadline {
                throw StrataError(.busy, "\(storePath) is busy: another process holds the write lock (waited \(timeout) s)")
            }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    func unlockWriter() {
        try? file.unlock(byte: SharedState.writerLockByte)
    }

    // MARK: Reader slots

    func readSlots() throws -> [ReaderSlot] {
        if let mapped {
            return (0..<ReaderSlot.count).map { i in
                let p = mapped.base + ReaderSlot.tableOffset + i * ReaderSlot.size
                return ReaderSlot(
                    state: ReaderSlot.State(rawValue: p.load(fromByteOffset: ReaderSlotField.state, as: UInt32.self).littleEndian) ?? .free,
                    processID: Int32(bitPattern: p.load(fromByteOffset: ReaderSlotField.processID, as: UInt32.self).littleEndian),
                    generation: Generation(p.load(fromByteOffset: ReaderSlotField.generation, as: UInt64.self).littleEndian),
                    since: p.load(fromByteOffset: ReaderSlotField.since, as: UInt64.self).littleEndian)
            }
        }
        var buffer = [UInt8](repeating: 0, count: ReaderSlot.size * ReaderSlot.count)
        let count = try buffer.withUnsafeMutableBytes { try file.read(into: $0, at: Int64(ReaderSlot.tableOffset)) }
        return buffer.withUnsafeBytes { raw in
            (0..<ReaderSlot.count).map { i in
                guard (i + 1) * ReaderSlot.size <= count else { return .free }
                let p = raw.baseAddress! + i * ReaderSlot.size
                return ReaderSlot(
                    state: ReaderSlot.State(rawValue: p.u32(ReaderSlotField.state)) ?? .free, processID: Int32(bitPattern: p.u32(ReaderSlotField.processID)),
                    generation: Generation(p.u64(ReaderSlotField.generation)), since: p.u64(ReaderSlotField.since))
            }
        }
    }

    /// The state of slot `index` (from the mapping when there is one).
    func slotState(_ index: Int) throws -> ReaderSlot.State {
        if let mapped {
            let raw = UInt32(littleEndian: (mapped.base + ReaderSlot.tableOffset + index * ReaderSlot.size).load(fromByteOffset: ReaderSlotField.state, as: UInt32.self))
            return ReaderSlot.State(rawValue: raw) ?? .free
        }
        var raw: UInt32 = 0
        let count = try withUnsafeMutableBytes(of: &raw) { try file.read(into: $0, at: Int64(ReaderSlot.tableOffset + index * ReaderSlot.size + ReaderSlotField.state)) }
        return count == 4 ? ReaderSlot.State(rawValue: UInt32(littleEndian: raw)) ?? .free : .free
    }

    func writeSlot(_ index: Int, _ slot: ReaderSlot) throws {
        var bytes = [UInt8](repeating: 0, count: ReaderSlot.size)
        bytes.withUnsafeMutableBytes { raw in
            let p = raw.baseAddress!
            p.setU32(ReaderSlotField.state, slot.state.rawValue)
            p.setU32(ReaderSlotField.processID, UInt32(bitPattern: slot.processID))
            p.setU64(ReaderSlotField.generation, slot.generation.rawValue)
            p.setU64(ReaderSlotField.since, slot.since)
        }
        try bytes.withUnsafeBytes { try file.write($0, at: Int64(ReaderSlot.tableOffset + index * ReaderSlot.size)) }
    }

    /// Claims a free slot (one whose liveness byte nobody holds). Returns its index, or nil if all
    /// 128 are taken by live processes.
    func claimSlot(preferring preferred: Int?) throws -> Int? {
        let order = preferred.map { [$0] + (0..<ReaderSlot.count).filter { $0 != preferred } } ?? Array(0..<ReaderSlot.count)
        for index in order where try file.tryLock(byte: SharedState.slotLockBase + Int64(index), exclusive: true) {
            return index
        }
        return nil
    }

    func releaseSlot(_ index: Int) {
        try? writeSlot(index, .free)
        try? file.unlock(byte: SharedState.slotLockBase + Int64(index))
    }

    /// True if some other handle holds slot `index`'s liveness byte.
    func isSlotLive(_ index: Int) throws -> Bool {
        try file.isLockedByAnotherHandle(byte: SharedState.slotLockBase + Int64(index))
    }

    /// The generations pinned by live readers of other handles, with the slots holding them.
    func foreignPins(excluding own: Int?) throws -> [(slot: Int, generation: Generation)] {
        var pins: [(Int, Generation)] = []
        if let mapped {
            // Scan the mapped table in place; only active slots cost a liveness check.
            for index in 0..<ReaderSlot.count where index != own {
                let p = mapped.base + ReaderSlot.tableOffset + index * ReaderSlot.size
                guard UInt32(littleEndian: p.load(fromByteOffset: ReaderSlotField.state, as: UInt32.self)) == ReaderSlot.State.active.rawValue else { continue }
                if try isSlotLive(index) { pins.append((index, Generation(UInt64(littleEndian: p.load(fromByteOffset: ReaderSlotField.generation, as: UInt64.self))))) }
            }
            return pins
        }
        for (index, slot) in try readSlots().enumerated() where slot.state == .active && index != own {
            if try isSlotLive(index) { pins.append((index, slot.generation)) }
        }
        return pins
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(StrataInternal) import StrataCore

/// Seconds on a monotonic clock.
func monotonicSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}
