// IndexKeyList: the index keys a commit gathers for one index, in one byte buffer.
//
// Owns: appending keys (each with what the commit needs to know about it), putting them in the
// engine's key order (unsigned bytes, a prefix first) and handing them out as bytes. One buffer
// instead of an array per key: a big save gathers hundreds of thousands of keys, and reading
// them back in key order (not the order they were made in) would otherwise cost an allocation,
// a retain and a cache miss each. Never touches a tree.

import Foundation
import StrataStorage
@_spi(StrataInternal) import StrataCore
import StrataGraph

struct IndexKeyList<Info> {
    struct Entry {
        var start: Int
        /// A key's length (keys are under 64 KiB): with a small `Info`, an entry is 24 bytes.
        private var storedLength: UInt32
        var info: Info
        var length: Int { Int(storedLength) }

        init(start: Int, length: Int, info: Info) {
            self.start = start
            self.storedLength = UInt32(length)
            self.info = info
        }
    }
    private(set) var bytes: [UInt8] = []
    private(set) var entries: [Entry] = []

    init(capacity: Int, bytesPerKey: Int) {
        bytes.reserveCapacity(capacity * bytesPerKey)
        entries.reserveCapacity(capacity)
    }

    /// Makes room for `count` more keys as long as the last one (an eighth more bytes, for
    /// keys of varying length).
    mutating func reserve(more count: Int) {
        guard count > 0, let last = entries.last else { return }
        entries.reserveCapacity(entries.count + count)
        bytes.reserveCapacity(bytes.count + count * last.length + count * last.length / 8)
    }

    /// Appends the key that `build` writes at the end of the buffer; `build` returns its info.
    mutating func append(_ build: (inout [UInt8]) -> Info) {
        let start = bytes.count
        let info = build(&bytes)
        entries.append(Entry(start: start, length: bytes.count - start, info: info))
    }

    mutating func append(_ key: [UInt8], info: Info) {
        entries.append(Entry(start: bytes.count, length: key.count, info: info))
        bytes.append(contentsOf: key)
    }

    /// Removes every key, keeping the buffers' room for the next ones.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        entries.removeAll(keepingCapacity: true)
    }

    /// Removes the key appended last (its bytes too, so they are not left in the buffer).
    mutating func removeLast() {
        let last = entries.removeLast()
        if last.start + last.length == bytes.count { bytes.removeLast(last.length) }
    }

    /// Writes `primaryKey(info)`, big-endian, over the last 8 bytes of every key (an index
    /// entry's primary key), for keys made before their rows had keys. The order is kept only if
    /// no two keys share the bytes before those 8: the caller makes sure.
    mutating func setPrimaryKeys(_ primaryKey: (Info) -> Int64) {
        bytes.withUnsafeMutableBytes { buffer in
            for entry in entries where entry.length >= 8 {
                buffer.storeBytes(of: UInt64(bitPattern: primaryKey(entry.info)).bigEndian, toByteOffset: entry.start + entry.length - 8, as: UInt64.self)
            }
        }
    }

    /// Changes the info of the key appended last.
    mutating func updateLast(_ change: (inout Info) -> Void) {
        change(&entries[entries.count - 1].info)
    }

    /// Drops the keys whose info matches (their bytes stay in the buffer, unreferenced).
    mutating func removeAll(where drop: (Info) -> Bool) {
        entries.removeAll { drop($0.info) }
    }

    /// Whether this list's last key has the same bytes as `other`'s last key.
    func lastKeyEquals<Other>(_ other: IndexKeyList<Other>) -> Bool {
        guard let mine = entries.last, let theirs = other.entries.last, mine.length == theirs.length else { return false }
        return bytes.withUnsafeBytes { a in
            other.bytes.withUnsafeBytes { b in
                mine.length == 0 || memcmp(a.baseAddress! + mine.start, b.baseAddress! + theirs.start, mine.length) == 0
            }
        }
    }

    /// Calls `body` with each key and its info, in the current order.
    func forEach(_ body: (UnsafeRawBufferPointer, Info) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { base in
            for entry in entries {
                try body(UnsafeRawBufferPointer(rebasing: base[entry.start..<entry.start + entry.length]), entry.info)
            }
        }
    }

    /// Calls `body` with the number of keys and accessors for the `i`th key and info, in the
    /// current order (for the engine's batch writes). The key buffers are valid during `body`.
    func withKeys<R>(_ body: (_ count: Int, _ key: (Int) -> UnsafeRawBufferPointer, _ info: (Int) -> Info) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { base in
            try entries.withUnsafeBufferPointer { entries in
                try body(entries.count, { i in
                    let entry = entries[i]
                    return UnsafeRawBufferPointer(rebasing: base[entry.start..<entry.start + entry.length])
                }, { i in entries[i].info })
            }
        }
    }

    /// Puts the keys in the engine's order; a no-op when they already are. Each key's first
    /// 24 bytes, read as three big-endian words, settle most comparisons (an index key of one
    /// number is 17 bytes: tag, value, primary key): lists longer than `radixAbove` are sorted
    /// by those words with a radix sort (a big save's index keys: a comparison sort of 100,000
    /// keys cost ~650 instructions a key), then keys whose words tie by their whole bytes.
    mutating func sort(radixAbove threshold: Int = 1024) {
        guard entries.count > 1 else { return }
        let sorted: [Int]? = bytes.withUnsafeBytes { base in
            func key(_ entry: Entry) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: base[entry.start..<entry.start + entry.length])
            }
            var inOrder = true
            for index in 1..<entries.count where !Self.precedes(key(entries[index - 1]), key(entries[index])) {
                inOrder = false
                break
            }
            if inOrder { return nil }
            var order: [RadixSort.Item] = []
            order.reserveCapacity(entries.count)
            for (index, entry) in entries.enumerated() {
                let bytes = key(entry)
                order.append(RadixSort.Item(first: Self.word(bytes, at: 0), second: Self.word(bytes, at: 8),
                                     third: Self.word(bytes, at: 16), index: index))
            }
            func wholeKeyOrder(_ a: RadixSort.Item, _ b: RadixSort.Item) -> Bool {
                let (x, y) = (key(entries[a.index]), key(entries[b.index]))
                if Self.precedes(x, y) { return true }
                return !Self.precedes(y, x) && a.index < b.index
            }
            if order.count > threshold {
                RadixSort.sort(&order)
                // Runs of equal words (keys alike in their first 24 bytes) by their bytes.
                var start = 0
                while start < order.count {
                    var end = start + 1
                    while end < order.count && order[end].sameWords(order[start]) { end += 1 }
                    if end - start > 16 {
                        order[start..<end].sort(by: wholeKeyOrder)
                    } else if end - start > 1 {
                        for i in start + 1..<end {   // a few keys: insertion, no buffer
                            var j = i
                            while j > start && wholeKeyOrder(order[j], order[j - 1]) { order.swapAt(j, j - 1); j -= 1 }
                        }
                    }
                    start = end
                }
            } else {
                order.sort { a, b in
                    if a.first != b.first { return a.first < b.first }
                    if a.second != b.second { return a.second < b.second }
                    if a.third != b.third { return a.third < b.third }
                    return wholeKeyOrder(a, b)
                }
            }
            return order.map(\.index)
        }
        if let sorted { permute(into: sorted) }
    }

    /// Puts the entries in `order` (entry `order[i]` goes to position `i`) in place, one cycle of
    /// the permutation at a time, instead of building a second array of entries beside them.
    private mutating func permute(into order: [Int]) {
        var placed = [Bool](repeating: false, count: order.count)
        entries.withUnsafeMutableBufferPointer { entries in
            for start in order.indices where !placed[start] {
                let first = entries[start]
                var position = start
                while true {
                    placed[position] = true
                    let source = order[position]
                    if source == start { entries[position] = first; break }
                    entries[position] = entries[source]
                    position = source
                }
            }
        }
    }

    /// Whether key `a` sorts before key `b` (unsigned bytes, a prefix first).
    static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let common = min(a.count, b.count)
        if common > 0, let x = a.baseAddress, let y = b.baseAddress {
            let order = memcmp(x, y, common)
            if order != 0 { return order < 0 }
        }
        return a.count < b.count
    }

    /// Eight bytes of `key` from `offset` as a big-endian word (zero-padded past the end).
    private static func word(_ key: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        if offset + 8 <= key.count { return UInt64(bigEndian: key.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        var word: UInt64 = 0
        for index in offset..<offset + 8 { word = word << 8 | UInt64(index < key.count ? key[index] : 0) }
        return word
    }
}
