// PageExamination: one page's bytes put through the checks the pager runs on every tree page it
// loads (after the checksum), then, when they pass, read through every cell accessor the B+tree
// uses. It exists for the `page` fuzz target (Fuzz/): the accessors read validated pages without
// bounds checks, so a page the validator lets through must be safe to read whole, and its cells
// must agree with themselves.
//
// Owns: that examination, as SPI (`StrataFuzzing`). Never touches a file, and never changes the
// validator: it only asks it.

@_spi(StrataFuzzing)
public enum PageExamination {
    /// What one examination found.
    public struct Outcome: Sendable, Equatable {
        /// The validator's problem with the page (nil: it passed, and its cells were read).
        public var problem: String?
        /// The cells read (0 when the page was refused).
        public var cells: Int
        /// A broken promise of a validated page (a cell that does not compare equal to its own
        /// key, say): a defect, never the page's fault.
        public var violation: String?
    }

    /// The page sizes a store may have (FORMAT.md §3).
    public static let pageSizes = [1024, 2048, 4096, 8192, 16384, 32768, 65536]

    /// Examines `bytes` (exactly one page of a size in `pageSizes`) as a tree page.
    public static func examine(_ bytes: [UInt8]) -> Outcome {
        guard pageSizes.contains(bytes.count) else {
            return Outcome(problem: "\(bytes.count) bytes is not a page size", cells: 0, violation: nil)
        }
        let page = PageBuffer.uninitialized(size: bytes.count)
        bytes.withUnsafeBytes { page.base.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        if let problem = TreePageValidator().problem(in: page) { return Outcome(problem: problem, cells: 0, violation: nil) }
        guard page.isLeaf || page.isBranch else { return Outcome(problem: nil, cells: 0, violation: nil) }
        let count = page.cellCount
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: page.size, alignment: 8)
        defer { scratch.deallocate() }
        for index in 0..<count {
            let key = page.copyKey(at: index)
            let violation: String? = key.withUnsafeBytes { key in
                if page.compareKey(at: index, key) != 0 { return "cell \(index) does not compare equal to its own key" }
                if !page.keyEquals(at: index, key) { return "cell \(index) is not equal to its own key" }
                if !page.keyHasPrefix(at: index, key) { return "cell \(index) does not begin with its own key" }
                let whole = page.wholeKey(at: index, scratch: scratch)
                if !whole.elementsEqual(key) { return "cell \(index): the assembled key differs from the copied one" }
                let low = page.lowerBound(key), high = page.upperBound(key)
                if low > high || high > count { return "cell \(index): bounds \(low)...\(high) of its key outside 0...\(count)" }
                return nil
            }
            if let violation { return Outcome(problem: nil, cells: index, violation: violation) }
            let cell = page.cellBytes(at: index)
            if cell.isEmpty { return Outcome(problem: nil, cells: index, violation: "cell \(index) has no bytes") }
            if page.isBranch {
                if page.child(at: index).rawValue == 0 { return Outcome(problem: nil, cells: index, violation: "cell \(index) names child page 0") }
            } else if case .inline(let value) = page.leafValue(at: index) {
                // Every byte of an inline value lies in the page.
                var sum: UInt8 = 0
                for byte in value { sum &+= byte }
                _ = sum
            }
        }
        if page.isBranch, page.child(at: count).rawValue == 0 {
            return Outcome(problem: nil, cells: count, violation: "the rightmost child is page 0")
        }
        if page.isLeaf, count > 0 {
            let shared = page.copyKey(at: count - 1).withUnsafeBytes { page.sharedPrefixLength(including: $0) }
            if shared > min(255, page.copyKey(at: count - 1).count) {
                return Outcome(problem: nil, cells: count, violation: "the leaf's keys share \(shared) bytes, more than its last key has")
            }
        }
        return Outcome(problem: nil, cells: count, violation: nil)
    }
}
