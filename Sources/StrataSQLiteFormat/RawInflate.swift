// RawInflate: decompression of raw DEFLATE data (RFC 1951: no zlib or gzip wrapper), as Core Data
// stores its compiled model in `Z_MODELCACHE`: stored, fixed-Huffman and dynamic-Huffman blocks,
// lengths and distances back into the output.
//
// Owns: the bit reader (least significant bit first), canonical Huffman codes built from code
// lengths, and the block loop. Never trusts the input: a code set that is over-subscribed or
// incomplete where that is not allowed, a distance before the start of the output, a stored
// block whose length check fails, a reserved block type or symbol, input that ends early, and
// output beyond `limit` are each an error naming what was wrong and where.

import Foundation
import StrataCore

enum RawInflate {
    /// The decompressed bytes of `input`; `what` names the data in errors.
    static func inflate(_ input: [UInt8], limit: Int = 1 << 30, what: String) throws -> [UInt8] {
        var state = State(input: input, limit: limit, what: what)
        var last = false
        while !last {
            last = try state.bits(1) == 1
            switch try state.bits(2) {
            case 0: try state.stored()
            case 1: try state.codes(Self.fixed.literals, Self.fixed.distances)
            case 2:
                let (literals, distances) = try state.dynamicCodes()
                try state.codes(literals, distances)
            default: throw state.error("block type 3 is reserved")
            }
        }
        return state.output
    }

    /// A canonical Huffman code: how many codes have each length, and the symbols in code order.
    struct Huffman {
        var counts = [Int](repeating: 0, count: 16)
        var symbols: [Int] = []

        /// Builds the code of `lengths` (0: the symbol has no code). Returns nil when the lengths
        /// over-subscribe the code space; `incomplete` says whether codes are left unused.
        init?(_ lengths: ArraySlice<Int>, incomplete: inout Bool) {
            for length in lengths { counts[length] += 1 }
            var left = 1
            for length in 1...15 {
                left = left * 2 - counts[length]
                if left < 0 { return nil }
            }
            incomplete = left > 0 && counts[0] < lengths.count
            var offsets = [Int](repeating: 0, count: 16)
            for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
            symbols = [Int](repeating: 0, count: lengths.count)
            for (symbol, length) in zip(0..., lengths) where length > 0 {
                symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
        }

        /// Whether every code is one bit long (an incomplete code is allowed only so).
        var onlyOneBitCodes: Bool { counts[2...].allSatisfy { $0 == 0 } }
    }

    static let fixed: (literals: Huffman, distances: Huffman) = {
        var lengths = [Int](repeating: 8, count: 288)
        for i in 144..<256 { lengths[i] = 9 }
        for i in 256..<280 { lengths[i] = 7 }
        var incomplete = false
        return (Huffman(lengths[...], incomplete: &incomplete)!, Huffman([Int](repeating: 5, count: 30)[...], incomplete: &incomplete)!)
    }()

    static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073,
                               4097, 6145, 8193, 12289, 16385, 24577]
    static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]
    /// The order in which a dynamic block gives the code lengths of the code-length code.
    static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    struct State {
        let input: [UInt8]
        let limit: Int
        let what: String
        var position = 0
        var bitBuffer = 0
        var bitCount = 0
        var output: [UInt8] = []

        init(input: [UInt8], limit: Int, what: String) {
            self.input = input
            self.limit = limit
            self.what = what
        }

        func error(_ message: String) -> StrataError {
            StrataError(.corrupt, "\(what): compressed data at byte \(position): \(message)")
        }

        mutating func bits(_ count: Int) throws -> Int {
            while bitCount < count {
                guard position < input.count else { throw error("the data ends in the middle of a block") }
                bitBuffer |= Int(input[position]) << bitCount
                position += 1
                bitCount += 8
            }
            let value = bitBuffer & ((1 << count) - 1)
            bitBuffer >>= count
            bitCount -= count
            return value
        }

        /// A stored block: byte-aligned length, its complement, then the bytes.
        mutating func stored() throws {
            bitBuffer = 0
            bitCount = 0
            guard position + 4 <= input.count else { throw error("a stored block's header is cut off") }
            let length = Int(input[position]) | Int(input[position + 1]) << 8
            let check = Int(input[position + 2]) | Int(input[position + 3]) << 8
            guard length == ~check & 0xFFFF else { throw error("a stored block's length \(length) does not match its complement") }
            position += 4
            guard position + length <= input.count else { throw error("a stored block of \(length) bytes is cut off") }
            guard output.count + length <= limit else { throw error("the output would exceed \(limit) bytes") }
            output.append(contentsOf: input[position..<(position + length)])
            position += length
        }

        /// One symbol of `code` (read a bit at a time, first code of each length in order).
        mutating func decode(_ code: Huffman) throws -> Int {
            var first = 0, index = 0, value = 0
            for length in 1...15 {
                value |= try bits(1)
                let count = code.counts[length]
                if value - count < first { return code.symbols[index + (value - first)] }
                index += count
                first = (first + count) << 1
                value <<= 1
            }
            throw error("no code matches the next bits")
        }

        /// Literals, lengths and distances until the end-of-block symbol.
        mutating func codes(_ literals: Huffman, _ distances: Huffman) throws {
            while true {
                let symbol = try decode(literals)
                if symbol < 256 {
                    guard output.count < limit else { throw error("the output would exceed \(limit) bytes") }
                    output.append(UInt8(symbol))
                    continue
                }
                if symbol == 256 { return }
                let lengthCode = symbol - 257
                guard lengthCode < 29 else { throw error("length symbol \(symbol) is not used") }
                let length = RawInflate.lengthBase[lengthCode] + (try bits(RawInflate.lengthExtra[lengthCode]))
                let distanceCode = try decode(distances)
                guard distanceCode < 30 else { throw error("distance symbol \(distanceCode) is not used") }
                let distance = RawInflate.distanceBase[distanceCode] + (try bits(RawInflate.distanceExtra[distanceCode]))
                guard distance <= output.count else { throw error("a distance of \(distance) reaches before the start of the output (\(output.count) bytes)") }
                guard output.count + length <= limit else { throw error("the output would exceed \(limit) bytes") }
                let start = output.count - distance
                for offset in 0..<length { output.append(output[start + offset]) }
            }
        }

        /// A dynamic block's literal/length and distance codes.
        mutating func dynamicCodes() throws -> (Huffman, Huffman) {
            let literalCount = try bits(5) + 257, distanceCount = try bits(5) + 1, lengthCount = try bits(4) + 4
            guard literalCount <= 286, distanceCount <= 30 else { throw error("\(literalCount) literal and \(distanceCount) distance codes (at most 286 and 30)") }
            var lengths = [Int](repeating: 0, count: 19)
            for index in 0..<lengthCount { lengths[RawInflate.codeLengthOrder[index]] = try bits(3) }
            var incomplete = false
            guard let lengthCode = Huffman(lengths[...], incomplete: &incomplete), !incomplete else {
                throw error("the code-length code is not a complete code")
            }
            var all: [Int] = []
            all.reserveCapacity(literalCount + distanceCount)
            while all.count < literalCount + distanceCount {
                let symbol = try decode(lengthCode)
                switch symbol {
                case 0..<16: all.append(symbol)
                case 16:
                    guard let previous = all.last else { throw error("a repeat of the previous length with none before it") }
                    all += [Int](repeating: previous, count: 3 + (try bits(2)))
                case 17: all += [Int](repeating: 0, count: 3 + (try bits(3)))
                default: all += [Int](repeating: 0, count: 11 + (try bits(7)))
                }
            }
            guard all.count == literalCount + distanceCount else { throw error("code lengths run past the codes they describe") }
            guard all[256] > 0 else { throw error("the block has no end-of-block code") }
                // An incomplete code is allowed only when it is a single one-bit code.
            guard let literals = Huffman(all[0..<literalCount], incomplete: &incomplete), !incomplete || literals.onlyOneBitCodes else {
                throw error("the literal/length code lengths do not make a code")
            }
            guard let distances = Huffman(all[literalCount...], incomplete: &incomplete), !incomplete || distances.onlyOneBitCodes else {
                throw error("the distance code lengths do not make a code")
            }
            return (literals, distances)
        }
    }
}
