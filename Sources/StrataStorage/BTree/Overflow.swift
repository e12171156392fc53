// Overflow: chains of overflow pages for values too large to sit in a leaf (FORMAT.md §Overflow).
//
// Owns: writing, reading and freeing chains. A chain is a singly linked list: each overflow
// page's header link names the next page (0 ends it) and its contentStart field says how many
// payload bytes (from offset 40) it holds; the leaf cell holds the first page and the total
// length. Must never follow a chain further than the declared length allows (a loop or a long
// chain in a corrupt file is an error, not a hang).

import StrataCore

enum OverflowChain {
    static func pageCount(length: Int, limits: NodeLimits) -> Int {
        (length + limits.overflowPayload - 1) / limits.overflowPayload
    }

    /// Writes `value` to newly allocated overflow pages; returns the first page.
    static func write<Sink: PageSink>(_ value: UnsafeRawBufferPointer, to sink: Sink) throws -> PageNumber {
        let capacity = sink.limits.overflowPayload
        let count = pageCount(length: value.count, limits: sink.limits)
        var pages: [PageBuffer] = []
        pages.reserveCapacity(count)
        for _ in 0..<count { pages.append(try sink.allocate(.overflow)) }
        for (i, page) in pages.enumerated() {
            let start = i * capacity
            let length = min(capacity, value.count - start)
            (page.base + PageHeader.size).copyMemory(from: value.baseAddress! + start, byteCount: length)
            page.contentStart = length
            page.link = i + 1 < count ? pages[i + 1].pageNumber : .none
        }
        return pages[0].pageNumber
    }

    /// Reads a chain's `length` bytes.
    static func read<Source: PageSource>(first: PageNumber, length: Int, from source: Source, tree: String) throws -> [UInt8] {
        var value = [UInt8](repeating: 0, count: length)
        try value.withUnsafeMutableBytes { out in
            var filled = 0
            try walk(first: first, length: length, source: source, tree: tree) { page, bytes in
                (out.baseAddress! + filled).copyMemory(from: page.base + PageHeader.size, byteCount: bytes)
                filled += bytes
            }
        }
        return value
    }

    /// Frees every page of a chain; returns how many.
    static func free<Sink: PageSink>(first: PageNumber, length: Int, in sink: Sink, tree: String) throws -> Int {
        var pages: [(PageNumber, Generation)] = []
        try walk(first: first, length: length, source: sink, tree: tree) { page, _ in
            pages.append((page.pageNumber, page.generation))
        }
        for (number, generation) in pages { try sink.free(number, writtenAt: generation) }
        return pages.count
    }

    /// Visits each page of a chain with the payload bytes it contributes, checking that the
    /// chain has exactly the pages and bytes `length` requires.
    static func walk<Source: PageSource>(
        first: PageNumber, length: Int, source: Source, tree: String,
        _ visit: (PageBuffer, Int) throws -> Void
    ) throws {
        let capacity = source.limits.overflowPayload
        var remaining = length
        var next = first
        while remaining > 0 {
            if next == .none {
                throw StrataError.corrupt(source.storePath, "tree \"\(tree)\": overflow chain from page \(first.rawValue) ends with \(remaining) of \(length) bytes missing")
            }
            let page = try source.page(next)
            guard page.type == .overflow else {
                throw StrataError.corrupt(source.storePath, page: next, "tree \"\(tree)\": expected an overflow page in the chain from page \(first.rawValue), found a \(page.type?.name ?? "page of type \(page.typeByte)")")
            }
            let bytes = page.contentStart
            let expected = min(capacity, remaining)
            if bytes != expected {
                throw StrataError.corrupt(source.storePath, page: next, "tree \"\(tree)\": overflow page holds \(bytes) bytes, expected \(expected)")
            }
            try visit(page, bytes)
            remaining -= bytes
            next = page.link
        }
        if next != .none {
            throw StrataError.corrupt(source.storePath, page: next, "tree \"\(tree)\": overflow chain from page \(first.rawValue) continues past its \(length) bytes")
        }
    }
}
