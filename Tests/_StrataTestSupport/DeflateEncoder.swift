// DeflateEncoder: a DEFLATE encoder for the tests (RFC 1951), written from the RFC apart from the
// decoder it checks: stored blocks, and fixed-Huffman blocks with greedy back-references.
//
// Owns: making test inputs for RawInflate and for Core Data model caches. Test support only: no
// dynamic-Huffman blocks (zlib-made fixtures cover them) and no tuning.

/// A DEFLATE encoder for the tests (RFC 1951): stored blocks, and fixed-Huffman blocks with
/// greedy back-references found through the last position of each 3-byte prefix.
public struct DeflateEncoder {
    public init() {}

    // RFC 1951, 3.2.5: the base lengths and distances of the length and distance codes.
    static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
                               4097, 6145, 8193, 12289, 16385, 24577]
    static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    public private(set) var bytes: [UInt8] = []
    private var bitBuffer = 0
    private var bitCount = 0

    private mutating func put(_ value: Int, _ count: Int) {
        bitBuffer |= value << bitCount
        bitCount += count
        while bitCount >= 8 {
            bytes.append(UInt8(bitBuffer & 0xFF))
            bitBuffer >>= 8
            bitCount -= 8
        }
    }

    /// A Huffman code goes out most significant bit first.
    private mutating func putCode(_ code: Int, _ length: Int) {
        var reversed = 0
        for bit in 0..<length where code & (1 << bit) != 0 { reversed |= 1 << (length - 1 - bit) }
        put(reversed, length)
    }

    private mutating func align() {
        if bitCount > 0 { put(0, 8 - bitCount) }
    }

    public mutating func stored(_ data: ArraySlice<UInt8>, last: Bool) {
        var start = data.startIndex
        repeat {
            let end = min(data.endIndex, start + 65_535)
            put(last && end == data.endIndex ? 1 : 0, 1)
            put(0, 2)
            align()
            let length = end - start
            bytes += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            bytes += data[start..<end]
            start = end
        } while start < data.endIndex
    }

    private mutating func literal(_ symbol: Int) {
        switch symbol {
        case 0..<144: putCode(0x30 + symbol, 8)
        case 144..<256: putCode(0x190 + symbol - 144, 9)
        case 256..<280: putCode(symbol - 256, 7)
        default: putCode(0xC0 + symbol - 280, 8)
        }
    }

    public mutating func fixed(_ data: ArraySlice<UInt8>, history: ArraySlice<UInt8>, last: Bool) {
        put(last ? 1 : 0, 1)
        put(1, 2)
        let all = Array(history) + Array(data)
        var recent: [Int: Int] = [:]
        func key(_ i: Int) -> Int { Int(all[i]) << 16 | Int(all[i + 1]) << 8 | Int(all[i + 2]) }
        for j in max(0, history.count - 32_768)..<history.count where j + 2 < all.count { recent[key(j)] = j }
        var i = history.count
        while i < all.count {
            if i + 2 < all.count, let candidate = recent[key(i)], i - candidate <= 32_768 {
                var length = 0
                while length < 258, i + length < all.count, all[candidate + length] == all[i + length] { length += 1 }
                if length >= 3 {
                    let code = Self.lengthBase.lastIndex { $0 <= length }!
                    literal(257 + code)
                    put(length - Self.lengthBase[code], Self.lengthExtra[code])
                    let distance = i - candidate
                    let dcode = Self.distanceBase.lastIndex { $0 <= distance }!
                    putCode(dcode, 5)
                    put(distance - Self.distanceBase[dcode], Self.distanceExtra[dcode])
                    for j in i..<min(i + length, all.count - 2) { recent[key(j)] = j }
                    i += length
                    continue
                }
            }
            if i + 2 < all.count { recent[key(i)] = i }
            literal(Int(all[i]))
            i += 1
        }
        literal(256)
        if last { align() }
    }
}
