// TreeDescriptor: where a tree lives and how big it is (FORMAT.md §Tree descriptor).
//
// Owns: the 56-byte descriptor codec stored as a catalog value (and, for the catalog and the
// free-space tree themselves, inside the meta). The ONLY encoder/decoder of that layout:
//
//   offset size field
//   0      4    root page
//   4      2    depth (1 = the root is a leaf)
//   6      2    flags (reserved, 0)
//   8      8    record count
//   16     8    branch pages
//   24     8    leaf pages
//   32     8    overflow pages
//   40     8    created generation
//   48     8    modified generation

/// The persistent description of one B+tree.
struct TreeDescriptor: Equatable, Sendable {
    var root: PageNumber
    var depth: Int
    var recordCount: UInt64
    var branchPages: UInt64
    var leafPages: UInt64
    var overflowPages: UInt64
    var createdGeneration: Generation
    var modifiedGeneration: Generation

    static let encodedSize = 56

    /// A descriptor for a tree whose root is the empty leaf `root`.
    static func empty(root: PageNumber, at generation: Generation) -> TreeDescriptor {
        TreeDescriptor(
            root: root, depth: 1, recordCount: 0, branchPages: 0, leafPages: 1, overflowPages: 0,
            createdGeneration: generation, modifiedGeneration: generation)
    }

    var pageCount: UInt64 { branchPages + leafPages + overflowPages }

    func encode(into base: UnsafeMutableRawPointer, at offset: Int) {
        base.setU32(offset, root.rawValue)
        base.setU16(offset + 4, UInt16(depth))
        base.setU16(offset + 6, 0)
        base.setU64(offset + 8, recordCount)
        base.setU64(offset + 16, branchPages)
        base.setU64(offset + 24, leafPages)
        base.setU64(offset + 32, overflowPages)
        base.setU64(offset + 40, createdGeneration.rawValue)
        base.setU64(offset + 48, modifiedGeneration.rawValue)
    }

    var encoded: [UInt8] {
        var bytes = [UInt8](repeating: 0, count: TreeDescriptor.encodedSize)
        bytes.withUnsafeMutableBytes { encode(into: $0.baseAddress!, at: 0) }
        return bytes
    }

    /// Decodes a descriptor, or describes why the bytes cannot be one.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> Result<TreeDescriptor, DescriptorProblem> {
        guard bytes.count == encodedSize else { return .failure(.init("descriptor is \(bytes.count) bytes, expected \(encodedSize)")) }
        let p = bytes.baseAddress!
        let descriptor = TreeDescriptor(
            root: PageNumber(p.u32(0)), depth: Int(p.u16(4)), recordCount: p.u64(8),
            branchPages: p.u64(16), leafPages: p.u64(24), overflowPages: p.u64(32),
            createdGeneration: Generation(p.u64(40)), modifiedGeneration: Generation(p.u64(48)))
        if descriptor.root == .none { return .failure(.init("descriptor has root page 0")) }
        if descriptor.depth < 1 || descriptor.depth > 64 { return .failure(.init("descriptor depth \(descriptor.depth) is outside 1...64")) }
        return .success(descriptor)
    }

    struct DescriptorProblem: Error { let text: String; init(_ text: String) { self.text = text } }
}
