// IndexKeyList: the index keys a commit gathers for one index, in one byte buffer.
//
// Owns: appending keys (each with what the commit needs to know about it), putting them in the
// engine's key order (unsigned bytes, a prefix first) and handing them out as bytes. One buffer
// instead of an array per key: a big save gathers hundreds of thousands of keys, and reading
// them back in key order (not the order they were made in) would otherwise cost an allocation,
// a retain and a cache miss each. Never touches a tree.

import Foundation

struct IndexKeyList<Info> {
    struct Entry {
        var start: Int
        var length: Int
        var info: Info
    }
    private(set) var bytes: [UInt8] = []
    private(set) var entries: [Entry] = []

    init(capacity: Int, bytesPerKey: Int) {
        bytes.reserveCapacity(capacity * bytesPerKey)
        entries.reserveCapacity(capacity)
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

    /// Removes the key appended last (its bytes too, so they are not left in the buffer).
    mutating func removeLast() {
        let last = entries.removeLast()
        if last.start + last.length == bytes.count { bytes.removeLast(last.length) }
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

    /// Puts the keys in the engine's order; a no-op when they already are. Each key's first
    /// sixteen bytes, read as two big-endian words, settle most comparisons.
    mutating func sort() {
        guard entries.count > 1 else { return }
        let sorted: [Entry]? = bytes.withUnsafeBytes { base in
            func key(_ entry: Entry) -> UnsafeRawBufferPointer {
                UnsafeRawBufferPointer(rebasing: base[entry.start..<entry.start + entry.length])
            }
            var inOrder = true
            for index in 1..<entries.count where !Self.precedes(key(entries[index - 1]), key(entries[index])) {
                inOrder = false
                break
            }
            if inOrder { return nil }
            var order: [(first: UInt64, second: UInt64, index: Int)] = []
            order.reserveCapacity(entries.count)
            for (index, entry) in entries.enumerated() {
                let bytes = key(entry)
                order.append((Self.word(bytes, at: 0), Self.word(bytes, at: 8), index))
            }
            order.sort { a, b in
                if a.first != b.first { return a.first < b.first }
                if a.second != b.second { return a.second < b.second }
                return Self.precedes(key(entries[a.index]), key(entries[b.index]))
            }
            return order.map { entries[$0.index] }
        }
        if let sorted { entries = sorted }
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
        var word: UInt64 = 0
        for index in offset..<offset + 8 { word = word << 8 | UInt64(index < key.count ? key[index] : 0) }
        return word
    }
}
