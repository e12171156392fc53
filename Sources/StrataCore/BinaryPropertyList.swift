// BinaryPropertyList: Apple's binary property list format (`bplist00`) read in pure Swift, with
// the UID values keyed archives are made of (Foundation on Linux reads UIDs as an opaque class
// whose number cannot be read, so compiled Core Data models need a reader of their own).
//
// The format: the magic `bplist00`; objects, each a marker byte (high nibble the type, low
// nibble a size or 15 for "an integer object follows"); an offset table; and a 32-byte trailer
// (offset-int size, object-ref size, object count, top object, offset-table offset).
//
// Owns: decoding a whole file into `BinaryPropertyList.Value`s (objects by index, containers
// holding indexes, so a shared or cyclic object is decoded once). Never trusts the bytes: every
// size, offset and reference is checked, and damage is a `corrupt` error naming the file and the
// object; never traps.

import Foundation

/// A binary property list, decoded object by object.
public struct BinaryPropertyList: Sendable {
    /// One object. Containers hold object indexes (`objects[index]`), as the file does.
    public enum Value: Sendable, Equatable {
        case null
        case bool(Bool)
        case integer(Int64)
        case real(Double)
        /// Seconds since 2001-01-01 (Core Foundation's reference date).
        case date(Double)
        case data([UInt8])
        case string(String)
        /// A keyed archive's reference to the object at this index of `$objects`.
        case uid(UInt64)
        case array([Int])
        case set([Int])
        /// Keys and values, as object indexes, in file order.
        case dictionary([(key: Int, value: Int)])

        public static func == (a: Value, b: Value) -> Bool {
            switch (a, b) {
            case (.null, .null): return true
            case (.bool(let x), .bool(let y)): return x == y
            case (.integer(let x), .integer(let y)): return x == y
            case (.real(let x), .real(let y)), (.date(let x), .date(let y)): return x == y || (x.isNaN && y.isNaN)
            case (.data(let x), .data(let y)): return x == y
            case (.string(let x), .string(let y)): return x == y
            case (.uid(let x), .uid(let y)): return x == y
            case (.array(let x), .array(let y)), (.set(let x), .set(let y)): return x == y
            case (.dictionary(let x), .dictionary(let y)): return x.map(\.key) == y.map(\.key) && x.map(\.value) == y.map(\.value)
            default: return false
            }
        }
    }

    /// Every object of the file, by index.
    public let objects: [Value]
    /// The index of the top object.
    public let top: Int

    /// Whether `bytes` start as a binary property list.
    public static func isBinaryPropertyList(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.starts(with: Array("bplist00".utf8))
    }

    /// Decodes `bytes`; `file` names them in errors.
    public init(_ bytes: [UInt8], file: String) throws {
        func corrupt(_ problem: String) -> StrataError {
            StrataError(.corrupt, "\(file): not a readable binary property list: \(problem)")
        }
        guard bytes.count >= 8 + 32, Self.isBinaryPropertyList(bytes) else {
            throw corrupt(bytes.count < 40 ? "\(bytes.count) bytes is too short" : "no bplist00 header")
        }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6]), referenceSize = Int(bytes[trailer + 7])
        func bigEndian(_ at: Int, _ size: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in at..<(at + size) { value = value << 8 | UInt64(bytes[index]) }
            return value
        }
        let count = bigEndian(trailer + 8, 8), topObject = bigEndian(trailer + 16, 8), tableOffset = bigEndian(trailer + 24, 8)
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw corrupt("offset size \(offsetSize) or reference size \(referenceSize) is not 1 to 8 bytes")
        }
        guard count > 0, count <= UInt64(bytes.count), topObject < count, tableOffset >= 8,
              tableOffset <= UInt64(trailer), (UInt64(trailer) - tableOffset) / UInt64(offsetSize) >= count else {
            throw corrupt("the trailer's object count \(count), top object \(topObject) or offset table at \(tableOffset) does not fit the file")
        }
        let objectCount = Int(count)
        var offsets: [Int] = []
        offsets.reserveCapacity(objectCount)
        for index in 0..<objectCount {
            let offset = bigEndian(Int(tableOffset) + index * offsetSize, offsetSize)
            guard offset >= 8, offset < tableOffset else { throw corrupt("object \(index) is at offset \(offset), outside the object area") }
            offsets.append(Int(offset))
        }
        let end = Int(tableOffset)
        var objects: [Value] = []
        objects.reserveCapacity(objectCount)
        for (index, offset) in offsets.enumerated() {
            func fail(_ problem: String) -> StrataError { corrupt("object \(index) at offset \(offset): \(problem)") }
            let marker = bytes[offset]
            let kind = marker >> 4, info = Int(marker & 0x0F)
            var at = offset + 1
            /// The object's length: the low nibble, or an integer object after the marker.
            func length() throws -> Int {
                guard info == 15 else { return info }
                guard at < end, bytes[at] >> 4 == 1 else { throw fail("a length is not an integer object") }
                let size = 1 << Int(bytes[at] & 0x0F)
                guard size <= 8, at + 1 + size <= end else { throw fail("a length runs past the object area") }
                let value = bigEndian(at + 1, size)
                at += 1 + size
                guard value <= UInt64(end) else { throw fail("a length of \(value) is larger than the file") }
                return Int(value)
            }
            func span(_ size: Int) throws -> Range<Int> {
                guard size >= 0, at <= end, size <= end - at else { throw fail("\(size) bytes run past the object area") }
                return at..<(at + size)
            }
            func references(_ count: Int) throws -> [Int] {
                let range = try span(count * referenceSize)
                return try (0..<count).map { position in
                    let reference = bigEndian(range.lowerBound + position * referenceSize, referenceSize)
                    guard reference < count64(objectCount) else { throw fail("it refers to object \(reference) of \(objectCount)") }
                    return Int(reference)
                }
            }
            switch kind {
            case 0x0:
                switch info {
                case 0: objects.append(.null)
                case 8: objects.append(.bool(false))
                case 9: objects.append(.bool(true))
                default: throw fail("marker 0x\(String(marker, radix: 16)) is not null, true or false")
                }
            case 0x1:
                let size = 1 << info
                guard size <= 16 else { throw fail("an integer of \(size) bytes") }
                let range = try span(size)
                // 16-byte integers keep their low 8 bytes (values beyond Int64 are not used here).
                let value = bigEndian(range.upperBound - min(size, 8), min(size, 8))
                objects.append(.integer(size >= 8 ? Int64(bitPattern: value) : Int64(value)))
            case 0x2:
                guard info == 2 || info == 3 else { throw fail("a real of \(1 << info) bytes") }
                let range = try span(1 << info)
                let raw = bigEndian(range.lowerBound, 1 << info)
                objects.append(.real(info == 2 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw)))
            case 0x3:
                guard info == 3 else { throw fail("a date of \(1 << info) bytes") }
                let range = try span(8)
                objects.append(.date(Double(bitPattern: bigEndian(range.lowerBound, 8))))
            case 0x4:
                objects.append(.data(Array(bytes[try span(try length())])))
            case 0x5:
                guard let text = String(validating: bytes[try span(try length())], as: Unicode.ASCII.self) else { throw fail("an ASCII string holds a byte over 127") }
                objects.append(.string(text))
            case 0x6:
                let units = try length()
                let range = try span(units * 2)
                let codeUnits = stride(from: range.lowerBound, to: range.upperBound, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
                guard let text = String(validating: codeUnits, as: UTF16.self) else { throw fail("a UTF-16 string is not valid UTF-16") }
                objects.append(.string(text))
            case 0x8:
                let range = try span(info + 1)
                objects.append(.uid(bigEndian(range.lowerBound, info + 1)))
            case 0xA: objects.append(.array(try references(try length())))
            case 0xC: objects.append(.set(try references(try length())))
            case 0xD:
                let pairs = try length()
                let keys = try references(pairs)
                at += pairs * referenceSize
                let values = try references(pairs)
                objects.append(.dictionary(zip(keys, values).map { (key: $0, value: $1) }))
            default:
                throw fail("marker 0x\(String(marker, radix: 16)) is not a property-list type")
            }
        }
        self.objects = objects
        self.top = Int(topObject)
    }
}

private func count64(_ value: Int) -> UInt64 { UInt64(value) }
