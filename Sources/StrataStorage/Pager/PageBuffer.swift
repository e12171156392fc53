// PageBuffer: one page of bytes in memory, and the common page header every page carries.
//
// Owns: the page header codec (FORMAT.md §Page header): the ONLY code that knows where the
// checksum, WAL fields, type, cell count, page number, link, generation and content start live.
// A buffer is mutable only while it sits in a write transaction's dirty set; once published to
// the page cache or handed to a reader it is never written again.
//
//   offset size  field
//   0      4     checksum      the checksum (FORMAT.md §1) of bytes 12..<pageSize
//   4      4     walSalt       set only in WAL frame copies (0 in the store file is fine too)
//   8      4     walChain      set only in WAL frame copies
//   12     1     type          1 branch, 2 leaf, 3 overflow, 4 commit record, 5 patches (WAL only)
//   13     1     prefixLength  leaf: bytes of the key prefix at the page's end; else 0
//   14     2     cellCount
//   16     4     pageNumber    the page's own number (self-identification)
//   20     4     link          branch: rightmost child; overflow: next page; else 0
//   24     8     generation    the generation whose commit wrote this page version
//   32     4     contentStart  branch/leaf: first byte of the cell area; overflow: payload bytes
//   36     4     garbage       branch/leaf: unreferenced bytes inside the cell area
//   40     …     slots (branch/leaf), payload (overflow), meta (commit record)

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(StrataInternal) import StrataCore

/// The kind of a page (header byte 12).
enum PageType: UInt8, Sendable {
    case branch = 1
    case leaf = 2
    case overflow = 3
    case commit = 4
    /// A WAL block of page patches (WAL only; FORMAT.md §10).
    case patches = 5

    var name: String {
        switch self {
        case .branch: "branch"
        case .leaf: "leaf"
        case .overflow: "overflow"
        case .commit: "commit"
        case .patches: "patches"
        }
    }
}

enum PageHeader {
    static let checksum = 0
    static let walSalt = 4
    static let walChain = 8
    static let type = 12
    static let keyPrefixLength = 13
    static let cellCount = 14
    static let pageNumber = 16
    static let link = 20
    static let generation = 24
    static let contentStart = 32
    static let garbage = 36
    static let size = 40
    /// The checksum covers bytes from here to the end of the page.
    static let checksummedFrom = 12
}

/// One page of memory (page-size bytes), freed when the last reference goes away.
///
/// The object header and the page bytes share one allocation (a `ManagedBuffer`), so touching a
/// cached page costs one cold cache line fewer: the reference count and the page header are
/// neighbours.
///
/// A buffer is written only by the write transaction that owns it in its dirty set (one thread
/// at a time, under the engine's writer lock); after commit it is published to the page cache
/// and is immutable from then on (see `SharedPage`).
final class PageBuffer: ManagedBuffer<PageBufferHeader, UInt8> {
    /// A zeroed page.
    static func zeroed(size: Int) -> PageBuffer {
        let page = uninitialized(size: size)
        page.base.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        return page
    }

    /// A page whose bytes are about to be overwritten by a read (not zeroed).
    static func uninitialized(size: Int) -> PageBuffer {
        unsafeDowncast(PageBuffer.create(minimumCapacity: size) { _ in PageBufferHeader(size: size) }, to: PageBuffer.self)
    }

    /// A copy of `other` (used for copy-on-write and scratch space).
    static func copy(of other: PageBuffer) -> PageBuffer {
        let page = uninitialized(size: other.size)
        page.base.copyMemory(from: other.base, byteCount: other.size)
        return page
    }

    /// The page's bytes (valid while the buffer is alive).
    @inline(__always) var base: UnsafeMutableRawPointer {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0) }
    }

    // The in-memory header fields are read and written through a pointer: `ManagedBuffer.header`
    // itself is a class property with dynamic exclusivity checks, which cost more than the
    // accesses (the size is read on every cell access). A page has one writer (see above).
    @inline(__always) var size: Int { withUnsafeMutablePointerToHeader { $0.pointee.size } }

    /// When a write transaction last touched this dirty page (for choosing pages to spill).
    @inline(__always) var lastTouched: UInt64 {
        get { withUnsafeMutablePointerToHeader { $0.pointee.lastTouched } }
        set { withUnsafeMutablePointerToHeader { $0.pointee.lastTouched = newValue } }
    }
    /// In memory only: see `PageBufferHeader.lastInsertSlot`.
    @inline(__always) var lastInsertSlot: Int32 {
        get { withUnsafeMutablePointerToHeader { $0.pointee.lastInsertSlot } }
        set { withUnsafeMutablePointerToHeader { $0.pointee.lastInsertSlot = newValue } }
    }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: size) }
    var mutableBytes: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(start: base, count: size) }

    // MARK: Header fields

    @inline(__always) var typeByte: UInt8 { base.u8(PageHeader.type) }
    @inline(__always) var type: PageType? { PageType(rawValue: typeByte) }
    @inline(__always) var isLeaf: Bool { typeByte == PageType.leaf.rawValue }
    @inline(__always) var isBranch: Bool { typeByte == PageType.branch.rawValue }

    @inline(__always) var cellCount: Int {
        get { Int(base.u16(PageHeader.cellCount)) }
        set { base.setU16(PageHeader.cellCount, UInt16(newValue)) }
    }
    @inline(__always) var pageNumber: PageNumber {
        get { PageNumber(base.u32(PageHeader.pageNumber)) }
        set { base.setU32(PageHeader.pageNumber, newValue.rawValue) }
    }
    @inline(__always) var link: PageNumber {
        get { PageNumber(base.u32(PageHeader.link)) }
        set { base.setU32(PageHeader.link, newValue.rawValue) }
    }
    @inline(__always) var generation: Generation {
        get { Generation(base.u64(PageHeader.generation)) }
        set { base.setU64(PageHeader.generation, newValue.rawValue) }
    }
    @inline(__always) var contentStart: Int {
        get { Int(base.u32(PageHeader.contentStart)) }
        set { base.setU32(PageHeader.contentStart, UInt32(newValue)) }
    }
    @inline(__always) var garbage: Int {
        get { Int(base.u32(PageHeader.garbage)) }
        set { base.setU32(PageHeader.garbage, UInt32(newValue)) }
    }
    var storedChecksum: UInt32 { base.u32(PageHeader.checksum) }
    var walSalt: UInt32 {
        get { base.u32(PageHeader.walSalt) }
        set { base.setU32(PageHeader.walSalt, newValue) }
    }
    var walChain: UInt32 {
        get { base.u32(PageHeader.walChain) }
        set { base.setU32(PageHeader.walChain, newValue) }
    }

    /// Clears the page and writes a fresh header for an empty page of `type`.
    func format(as type: PageType, number: PageNumber, generation: Generation) {
        base.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        base.setU8(PageHeader.type, type.rawValue)
        pageNumber = number
        self.generation = generation
        contentStart = (type == .branch || type == .leaf) ? size : 0
    }

    // MARK: Checksum

    func computeChecksum() -> UInt32 {
        Checksum.of(
            UnsafeRawPointer(base) + PageHeader.checksummedFrom, count: size - PageHeader.checksummedFrom)
    }

    /// Stores the checksum of the current contents (done just before a page is written out).
    func sealChecksum() {
        base.setU32(PageHeader.checksum, computeChecksum())
    }

    var hasValidChecksum: Bool { storedChecksum == computeChecksum() }
}

/// What a page buffer keeps beside its bytes.
struct PageBufferHeader {
    let size: Int
    var lastTouched: UInt64 = 0
    /// In memory only: the slot of the last cell the write transaction inserted into this leaf
    /// (-1: none yet). A split after inserts at consecutive slots keeps the left node full (see
    /// BTree+Split.swift).
    var lastInsertSlot: Int32 = -1
}

/// A published page crossing threads (the page cache, readers).
///
/// `@unchecked Sendable`: only pages that are immutable from now on are wrapped (committed
/// versions, or pages read from disk); nobody writes to a page after it is wrapped.
struct SharedPage: @unchecked Sendable {
    var page: PageBuffer
}
