// BinaryPropertyListWriter: writes binary property lists (`bplist00`) from Apple's published
// format, with UIDs, for the readers' tests: each object a marker and its bytes, an offset
// table, and the 32-byte trailer. Objects are added one by one and refer to each other by
// index, so shared and cyclic graphs (keyed archives) can be written.
//
// Test support only: written from the format, not from the reader, so each checks the other.
// Never reads.

import Foundation

public struct BinaryPropertyListWriter {
    public indirect enum Object {
        case bool(Bool)
        case integer(Int64)
        case real(Double)
        case date(Double)
        case data([UInt8])
        case string(String)
        case uid(UInt64)
        /// Elements are indexes of other objects.
        case array([Int])
        case set([Int])
        case dictionary([(key: Int, value: Int)])
    }

    public private(set) var objects: [Object] = []

    public init() {}

    /// Adds `object`; returns its index.
    @discardableResult
    public mutating func add(_ object: Object) -> Int {
        objects.append(object)
        return objects.count - 1
    }

    /// Replaces the object at `index` (to close a cycle).
    public mutating func set(_ index: Int, _ object: Object) { objects[index] = object }

    /// The file, with `top` as its top object.
    public func bytes(top: Int) -> [UInt8] {
        let referenceSize = objects.count < 256 ? 1 : objects.count < 65_536 ? 2 : 4
        var out = Array("bplist00".utf8)
        var offsets: [Int] = []
        func bigEndian(_ value: UInt64, _ size: Int) -> [UInt8] { (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) } }
        func length(_ kind: UInt8, _ count: Int) -> [UInt8] {
            if count < 15 { return [kind << 4 | UInt8(count)] }
            let size = count < 256 ? 0 : count < 65_536 ? 1 : 2
            return [kind << 4 | 0x0F, 0x10 | UInt8(size)] + bigEndian(UInt64(count), 1 << size)
        }
        func references(_ list: [Int]) -> [UInt8] { list.flatMap { bigEndian(UInt64($0), referenceSize) } }
        for object in objects {
            offsets.append(out.count)
            switch object {
            case .bool(let v): out.append(v ? 0x09 : 0x08)
            case .integer(let v):
                if v >= 0 && v < 256 { out += [0x10, UInt8(v)] }
                else if v >= 0 && v < 65_536 { out += [0x11] + bigEndian(UInt64(v), 2) }
                else if v >= 0 && v < 1 << 32 { out += [0x12] + bigEndian(UInt64(v), 4) }
                else { out += [0x13] + bigEndian(UInt64(bitPattern: v), 8) }
            case .real(let v): out += [0x23] + bigEndian(v.bitPattern, 8)
            case .date(let v): out += [0x33] + bigEndian(v.bitPattern, 8)
            case .data(let bytes): out += length(0x4, bytes.count) + bytes
            case .string(let text):
                if text.utf8.allSatisfy({ $0 < 128 }) {
                    out += length(0x5, text.utf8.count) + Array(text.utf8)
                } else {
                    let units = Array(text.utf16)
                    out += length(0x6, units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
                }
            case .uid(let v):
                let size = v < 256 ? 1 : v < 65_536 ? 2 : v < 1 << 32 ? 4 : 8
                out += [0x80 | UInt8(size - 1)] + bigEndian(v, size)
            case .array(let list): out += length(0xA, list.count) + references(list)
            case .set(let list): out += length(0xC, list.count) + references(list)
            case .dictionary(let pairs): out += length(0xD, pairs.count) + references(pairs.map(\.key)) + references(pairs.map(\.value))
            }
        }
        let tableOffset = out.count
        let offsetSize = tableOffset < 256 ? 1 : tableOffset < 65_536 ? 2 : 4
        for offset in offsets { out += bigEndian(UInt64(offset), offsetSize) }
        out += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
        out += bigEndian(UInt64(objects.count), 8) + bigEndian(UInt64(top), 8) + bigEndian(UInt64(tableOffset), 8)
        return out
    }
}
