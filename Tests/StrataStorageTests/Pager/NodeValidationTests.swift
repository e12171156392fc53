// NodeValidationTests: the checks every branch and leaf page passes when it is read, against an
// independent reading of FORMAT.md's node layout.
//
// Varint.read has a one-byte fast path and validateNode wrapping arithmetic (both for the cost
// of a page read); these tests compare them with plain decoders written from the format on
// random cells, then on the same pages with random bytes changed.

import XCTest
@testable import StrataStorage
import _StrataTestSupport

final class NodeValidationTests: XCTestCase {
    /// Varints of every length, cut short at every limit, and random bytes: the reader agrees
    /// with a byte-by-byte decoder (at most 10 bytes; nil when the limit comes first).
    func testVarintReadAgreesWithPlainDecoder() {
        withSeed { random in
            for _ in 0..<iterations(20_000, stress: 400_000) {
                var bytes: [UInt8]
                if random.chance(0.5) {
                    let width = 1 + random.next(below: 64)
                    let value = random.next() >> UInt64(64 - width)
                    bytes = [UInt8](repeating: 0, count: 12)
                    let n = bytes.withUnsafeMutableBytes { Varint.write(value, to: $0.baseAddress!, at: 1) }
                    bytes.removeSubrange((1 + n)...)
                    bytes.append(contentsOf: random.bytes(random.next(below: 3)))
                } else {
                    bytes = random.bytes(1 + random.next(below: 14)).map { random.chance(0.7) ? $0 | 0x80 : $0 }
                }
                let offset = random.next(below: min(2, bytes.count))
                let limit = offset + random.next(below: bytes.count - offset + 1)
                let read = bytes.withUnsafeBytes { Varint.read($0.baseAddress!, at: offset, limit: limit) }
                let expected = Self.plainVarint(bytes, at: offset, limit: limit)
                if read?.value != expected?.value || read?.size != expected?.size {
                    throw TestFailure("varint \(bytes) at \(offset) limit \(limit): read \(String(describing: read)), expected \(String(describing: expected))")
                }
            }
        }
    }

    /// Leaves and branches of random cells (keys and values across the one-byte varint limit,
    /// overflow pointers, a key prefix), intact and then with random bytes changed: the
    /// validator accepts exactly the pages the plain reading accepts.
    func testValidationAgreesWithPlainReading() {
        withSeed { random in
            var accepted = 0, refused = 0
            for round in 0..<iterations(5_000, stress: 100_000) {
                let page = Self.randomNode(&random, branch: random.chance(0.3))
                if page.validateNode() != nil { throw TestFailure("round \(round): an intact page was refused: \(page.validateNode()!)") }
                Self.damage(page, &random)
                let verdict = page.validateNode()
                let expected = Self.plainProblem(page)
                if (verdict == nil) != (expected == nil) {
                    throw TestFailure("round \(round): validator says \(verdict ?? "ok"), the plain reading \(expected ?? "ok")")
                }
                if verdict == nil { accepted += 1 } else { refused += 1 }
            }
            // Both outcomes must occur, or the comparison proves little.
            if accepted == 0 || refused == 0 { throw TestFailure("accepted \(accepted), refused \(refused)") }
        }
    }

    /// On a 1 KiB page a key prefix can be long enough that a key of under 128 bytes (its
    /// length one byte, validateNode's common case) passes the key limit with it. A cell's key
    /// is lengthened by as many bytes as its value is shortened, so the cell keeps its size and
    /// only the key limit is broken: the validator refuses the page, as the plain reading does.
    func testAShortKeyPastTheLimitOfALongPrefixIsRefused() {
        withSeed { random in
            var mutated = 0
            for round in 0..<iterations(2_000, stress: 40_000) {
                let limits = NodeLimits(pageSize: 1024)
                let page = PageBuffer.zeroed(size: 1024)
                page.format(as: .leaf, number: PageNumber(7), generation: Generation(1))
                let prefix = random.bytes(limits.maxKeyLength - 1 - random.next(below: 40))
                prefix.withUnsafeBytes { page.setKeyPrefix($0) }
                while true {
                    let key = random.bytes(random.next(below: limits.maxKeyLength - prefix.count))
                    let value = random.bytes(random.next(below: 64))
                    let size = NodeLimits.storedLeafCellSize(storedKeyLength: key.count, valueLength: value.count, overflow: false)
                    guard page.fits(cellSize: size) else { break }
                    let offset = page.insertCell(at: random.next(below: page.cellCount + 1), size: size)
                    key.withUnsafeBytes { key in
                        value.withUnsafeBytes { PageBuffer.encodeLeafCell(into: page.base, at: offset, key: key, valueLength: value.count, inlineValue: $0, overflow: nil) }
                    }
                }
                if let problem = page.validateNode() { throw TestFailure("round \(round): an intact page was refused: \(problem)") }
                // Cells whose value can give up the bytes the key needs to pass the limit.
                let over = limits.maxKeyLength - prefix.count + 1
                let candidates = (0..<page.cellCount).filter { index in
                    let offset = Int(page.base.u16(PageHeader.size + 2 * index))
                    return Int(page.base.u8(offset)) + Int(page.base.u8(offset + 1)) / 2 >= over
                }
                guard let index = candidates.randomElement(using: &random) else { continue }
                let offset = Int(page.base.u16(PageHeader.size + 2 * index))
                let total = Int(page.base.u8(offset)) + Int(page.base.u8(offset + 1)) / 2
                let least = max(over, total - 63) // the value's length stays one byte
                let keyLength = least + random.next(below: min(total, 127) - least + 1)
                page.base.setU8(offset, UInt8(keyLength))
                page.base.setU8(offset + 1, UInt8((total - keyLength) << 1))
                mutated += 1
                if Self.plainProblem(page) != "key limit" { throw TestFailure("round \(round): the plain reading says \(Self.plainProblem(page) ?? "ok")") }
                if page.validateNode() == nil { throw TestFailure("round \(round): a key of \(keyLength) bytes after a prefix of \(prefix.count) was accepted") }
            }
            if mutated == 0 { throw TestFailure("no page had a cell to lengthen") }
        }
    }

    /// Changes one to four random bytes of `page` after its header, sometimes its garbage count
    /// or key prefix length, sometimes a leaf cell's lengths; often then balances the garbage
    /// count against the cells' claimed sizes.
    static func damage(_ page: PageBuffer, _ random: inout SeededRandom) {
        for _ in 0..<1 + random.next(below: 4) {
            let at = PageHeader.size + random.next(below: page.size - PageHeader.size)
            page.base.setU8(at, random.chance(0.5) ? UInt8(truncatingIfNeeded: random.next()) : page.base.u8(at) ^ 0x80)
        }
        if random.chance(0.1) { page.base.setU32(PageHeader.garbage, UInt32(random.next(below: 64))) }
        if random.chance(0.05) { page.base.setU8(PageHeader.keyPrefixLength, UInt8(random.next(below: 48))) }
        // A leaf cell's one-byte lengths changed in place: a cell near the end can then claim
        // bytes past the page.
        if !page.isBranch, page.cellCount > 0, random.chance(0.3) {
            let offsets = (0..<page.cellCount).map { Int(page.base.u16(PageHeader.size + 2 * $0)) }
            let offset = random.chance(0.5) ? offsets.max()! : offsets[random.next(below: offsets.count)]
            if offset + 1 < page.size { page.base.setU8(offset + random.next(below: 2), UInt8(random.next(below: 64) << 1)) }
        }
        // Often the garbage count is made to balance the cells' claimed sizes, as a crafted file
        // would, so only the per-cell checks can refuse a cell that runs off the page.
        if random.chance(0.4), let claimed = claimedCellBytes(page) {
            let area = page.size - page.prefixLength - page.contentStart
            if claimed <= area { page.base.setU32(PageHeader.garbage, UInt32(area - claimed)) }
        }
    }

    // MARK: The plain reading

    static func plainVarint(_ bytes: [UInt8], at offset: Int, limit: Int) -> (value: UInt64, size: Int)? {
        var value: UInt64 = 0
        for i in 0..<10 {
            guard offset + i < limit else { return nil }
            let byte = bytes[offset + i]
            value |= UInt64(byte & 0x7F) << UInt64(7 * i)
            if byte < 0x80 { return (value, i + 1) }
        }
        return nil
    }

    /// The first reason `page` is not a well-formed node, read one field at a time (nil: none).
    static func plainProblem(_ page: PageBuffer) -> String? {
        if let problem = plainHeaderProblem(page) { return problem }
        let bytes = Array(page.bytes)
        var live = 0
        for index in 0..<page.cellCount {
            switch plainCell(page, bytes, index) {
            case .success(let size): live += size
            case .failure(let problem): return problem.message
            }
        }
        if live + page.garbage != page.size - page.prefixLength - page.contentStart { return "accounting" }
        return nil
    }

    /// The first reason the header fields cells are read through are wrong (nil: none).
    static func plainHeaderProblem(_ page: PageBuffer) -> String? {
        let prefix = page.prefixLength
        let end = page.size - prefix
        let start = page.contentStart
        if prefix > 0 && (page.isBranch || page.cellCount == 0) { return "prefix" }
        if start < PageHeader.size + 2 * page.cellCount || start > end { return "content start" }
        if page.garbage > end - start { return "garbage" }
        if page.isBranch && page.link.rawValue == 0 { return "rightmost child" }
        return nil
    }

    struct PlainProblem: Error { let message: String }

    /// Cell `index` of a page whose header is sound, read one field at a time: its size, or
    /// why it is not a well-formed cell.
    static func plainCell(_ page: PageBuffer, _ bytes: [UInt8], _ index: Int) -> Result<Int, PlainProblem> {
        let prefix = page.prefixLength
        let end = page.size - prefix
        let start = page.contentStart
        let maxKey = (page.size - PageHeader.size) / 4 - 13
        let offset = Int(bytes[PageHeader.size + 2 * index]) | Int(bytes[PageHeader.size + 2 * index + 1]) << 8
        func problem(_ message: String) -> Result<Int, PlainProblem> { .failure(PlainProblem(message: message)) }
        if offset < start || offset >= end { return problem("slot") }
        if page.isBranch {
            if offset + 4 > end { return problem("child") }
            if bytes[offset..<offset + 4].allSatisfy({ $0 == 0 }) { return problem("child 0") }
            guard let (length, n) = plainVarint(bytes, at: offset + 4, limit: end) else { return problem("key varint") }
            if length > UInt64(end - offset - 4 - n) { return problem("key length") }
            return .success(4 + n + Int(length))
        }
        guard let (length, n) = plainVarint(bytes, at: offset, limit: end) else { return problem("key varint") }
        guard let (word, m) = plainVarint(bytes, at: offset + n, limit: end) else { return problem("value varint") }
        if length > UInt64(maxKey) || Int(length) + prefix > maxKey { return problem("key limit") }
        let valueAt = offset + n + m + Int(length)
        if word & 1 == 1 {
            if valueAt + 4 > end { return problem("overflow pointer") }
            if bytes[valueAt..<valueAt + 4].allSatisfy({ $0 == 0 }) { return problem("overflow 0") }
            if word >> 1 > UInt64(Int32.max) { return problem("overflow length") }
            return .success(n + m + Int(length) + 4)
        }
        if word >> 1 > UInt64(end) || valueAt + Int(word >> 1) > end { return problem("value length") }
        return .success(n + m + Int(length) + Int(word >> 1))
    }

    /// The whole key of cell `index` (the leaf's prefix, then the stored bytes) of a cell
    /// `plainCell` accepts.
    static func plainWholeKey(_ page: PageBuffer, _ bytes: [UInt8], _ index: Int) -> [UInt8] {
        let offset = Int(bytes[PageHeader.size + 2 * index]) | Int(bytes[PageHeader.size + 2 * index + 1]) << 8
        let end = page.size - page.prefixLength
        if page.isBranch {
            let (length, n) = plainVarint(bytes, at: offset + 4, limit: end)!
            return Array(bytes[offset + 4 + n..<offset + 4 + n + Int(length)])
        }
        let (length, n) = plainVarint(bytes, at: offset, limit: end)!
        let (_, m) = plainVarint(bytes, at: offset + n, limit: end)!
        return Array(bytes[end...]) + bytes[offset + n + m..<offset + n + m + Int(length)]
    }

    /// The bytes the cells say they take, read with no check but the page's end for the varints
    /// (nil: a slot or varint outside the page).
    static func claimedCellBytes(_ page: PageBuffer) -> Int? {
        let bytes = Array(page.bytes)
        var total = 0
        for index in 0..<page.cellCount {
            let at = PageHeader.size + 2 * index
            guard at + 2 <= bytes.count else { return nil }
            let offset = Int(bytes[at]) | Int(bytes[at + 1]) << 8
            if page.isBranch {
                guard let (length, n) = plainVarint(bytes, at: offset + 4, limit: bytes.count), length < 1 << 20 else { return nil }
                total += 4 + n + Int(length)
            } else {
                guard let (length, n) = plainVarint(bytes, at: offset, limit: bytes.count), length < 1 << 20,
                      let (word, m) = plainVarint(bytes, at: offset + n, limit: bytes.count), word < 1 << 21 else { return nil }
                total += n + m + Int(length) + (word & 1 == 1 ? 4 : Int(word >> 1))
            }
        }
        return total
    }

    // MARK: Random nodes

    /// A random node on a page of 1 to 8 KiB. Some leaves get a key prefix long enough that a
    /// one-byte key length plus the prefix can pass the key limit of a 1 KiB page (validateNode
    /// then decodes every cell in full).
    static func randomNode(_ random: inout SeededRandom, branch: Bool) -> PageBuffer {
        let size = [1024, 2048, 4096, 4096, 8192][random.next(below: 5)]
        let page = PageBuffer.zeroed(size: size)
        page.format(as: branch ? .branch : .leaf, number: PageNumber(7), generation: Generation(1))
        let limits = NodeLimits(pageSize: size)
        if branch { page.link = PageNumber(UInt32(2 + random.next(below: 1000))) }
        let longCells = random.chance(0.5)
        let prefixLength = random.chance(0.2) ? limits.maxKeyLength - 1 - random.next(below: 40) : 1 + random.next(below: 40)
        let prefix = !branch && random.chance(0.3) ? random.bytes(min(prefixLength, 255)) : []
        if !prefix.isEmpty { prefix.withUnsafeBytes { page.setKeyPrefix($0) } }
        while true {
            let keyLength = random.next(below: min(longCells ? 300 : 12, limits.maxKeyLength - prefix.count))
            let key = random.bytes(keyLength)
            let index = random.next(below: page.cellCount + 1)
            let written = key.withUnsafeBytes { key -> Bool in
                if branch {
                    let size = NodeLimits.branchCellSize(keyLength: keyLength)
                    guard page.fits(cellSize: size) else { return false }
                    let offset = page.insertCell(at: index, size: size)
                    PageBuffer.encodeBranchCell(into: page.base, at: offset, child: PageNumber(UInt32(2 + random.next(below: 1000))), key: key)
                } else {
                    let overflow = random.chance(0.1)
                    let valueLength = overflow ? 5000 + random.next(below: 100_000) : random.next(below: longCells ? 400 : 20)
                    let size = NodeLimits.storedLeafCellSize(storedKeyLength: keyLength, valueLength: valueLength, overflow: overflow)
                    guard page.fits(cellSize: size) else { return false }
                    let offset = page.insertCell(at: index, size: size)
                    let value = random.bytes(overflow ? 0 : valueLength)
                    value.withUnsafeBytes { value in
                        PageBuffer.encodeLeafCell(into: page.base, at: offset, key: key, valueLength: valueLength,
                                                  inlineValue: overflow ? nil : value,
                                                  overflow: overflow ? PageNumber(UInt32(2 + random.next(below: 1000))) : nil)
                    }
                }
                return true
            }
            if !written { break }
            if random.chance(0.15) { page.removeCell(at: random.next(below: page.cellCount)) }
        }
        return page
    }
}
