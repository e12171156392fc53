// Records: the benchmark's data set, identical for every system.
//
// Record i (1...N): key = i as 8-byte big-endian; value = packed quake (magnitude f64, time i64,
// place and code as length-prefixed strings), about 60 bytes. Ids are loaded in ascending order;
// random ids come from a fixed-seed generator so every system sees the same sequence.

struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum Records {
    static func key(_ id: UInt64) -> [UInt8] { withUnsafeBytes(of: id.bigEndian) { Array($0) } }

    /// The packed value of record `id`.
    static func value(_ id: UInt64) -> [UInt8] {
        var random = SplitMix(seed: id &* 2_654_435_761)
        let magnitude = Double(random.next() % 800) / 100
        let time = Int64(1_500_000_000_000 + Int64(random.next() % 946_080_000_000))
        let place = "\(random.next() % 300) km WNW of Place \(id % 100_000)"
        let code = "nc\(String(id % 100_000_000).leftPadded(to: 8))"
        var bytes = [UInt8]()
        bytes.reserveCapacity(64)
        withUnsafeBytes(of: magnitude.bitPattern.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: time.littleEndian) { bytes += $0 }
        bytes.append(UInt8(place.utf8.count)); bytes += Array(place.utf8)
        bytes.append(UInt8(code.utf8.count)); bytes += Array(code.utf8)
        while bytes.count < 60 { bytes.append(0) }
        return bytes
    }

    /// The magnitude stored in a packed value (the field scans sum).
    @inline(__always) static func magnitude(_ value: UnsafeRawBufferPointer) -> Double {
        Double(bitPattern: UInt64(littleEndian: value.loadUnaligned(as: UInt64.self)))
    }

    /// `count` random ids in 1...n, the same for every system.
    static func randomIDs(_ count: Int, n: Int, seed: UInt64 = 42) -> [UInt64] {
        var random = SplitMix(seed: seed)
        return (0..<count).map { _ in 1 + random.next() % UInt64(n) }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
