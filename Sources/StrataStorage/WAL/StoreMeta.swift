// StoreMeta: the root of one committed state (FORMAT.md §Meta).
//
// Owns: the 136-byte meta codec, the ONLY encoder/decoder of that layout. A meta is stored in
// the store file header (the checkpointed state), in every WAL commit record (the state that
// commit made) and in the shared-memory header (the latest state, for other processes):
//
//   offset size field
//   0      8    generation
//   8      56   catalog tree descriptor
//   64     56   free-space tree descriptor
//   120    4    page count (pages 0..<pageCount exist)
//   124    4    reserved, 0
//   128    8    commit time (milliseconds since 1970, UTC)

/// Everything needed to read one committed state: its generation and tree roots.
struct StoreMeta: Equatable, Sendable {
    var generation: Generation
    var catalog: TreeDescriptor
    var freeTree: TreeDescriptor
    var pageCount: UInt32
    var commitTime: UInt64

    static let encodedSize = 136

    func encode(into base: UnsafeMutableRawPointer, at offset: Int) {
        base.setU64(offset, generation.rawValue)
        catalog.encode(into: base, at: offset + 8)
        freeTree.encode(into: base, at: offset + 64)
        base.setU32(offset + 120, pageCount)
        base.setU32(offset + 124, 0)
        base.setU64(offset + 128, commitTime)
    }

    /// Decodes a meta; `where` names the structure for the error message.
    static func decode(_ base: UnsafeRawPointer, at offset: Int, where place: String) throws -> StoreMeta {
        func descriptor(_ at: Int, _ what: String) throws -> TreeDescriptor {
            switch TreeDescriptor.decode(UnsafeRawBufferPointer(start: base + offset + at, count: TreeDescriptor.encodedSize)) {
            case .success(let d): return d
            case .failure(let problem): throw StrataError(.corrupt, "\(place): \(what) \(problem.text)")
            }
        }
        let meta = StoreMeta(
            generation: Generation(base.u64(offset)),
            catalog: try descriptor(8, "catalog"),
            freeTree: try descriptor(64, "free-space tree"),
            pageCount: base.u32(offset + 120),
            commitTime: base.u64(offset + 128))
        if meta.generation.rawValue >= Generation.limit {
            throw StrataError(.corrupt, "\(place): generation \(meta.generation.rawValue) is implausibly large")
        }
        for (name, d) in [("catalog", meta.catalog), ("free-space tree", meta.freeTree)] where d.root.rawValue >= meta.pageCount {
            throw StrataError(.corrupt, "\(place): \(name) root page \(d.root.rawValue) is beyond the page count \(meta.pageCount)")
        }
        return meta
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StrataCore

/// Milliseconds since 1970 (UTC), for commit times.
func currentTimeMilliseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return UInt64(spec.tv_sec) * 1000 + UInt64(spec.tv_nsec) / 1_000_000
}
