// WALResealing: makes every block of a WAL file pass the frame-validity rule again (FORMAT.md
// §10), for the fuzzer: a mutated byte then reaches commit records and page patches instead of
// only failing a checksum.
//
// Owns: that resealing, as SPI (`StrataFuzzing`). Never touches a file, and is never used by the
// engine: a store must never trust a frame it did not find valid.

@_spi(StrataInternal) import StrataCore

@_spi(StrataFuzzing)
public enum WALResealing {
    /// `wal` with every whole block after a valid header sealed in order (salt, checksum,
    /// chain); unchanged when the header is not valid.
    public static func resealed(_ wal: [UInt8]) -> [UInt8] {
        var bytes = wal
        guard let header = bytes.withUnsafeBytes({ WALHeader.decode($0) }) else { return bytes }
        let pageSize = header.pageSize
        var chain = header.checksum
        bytes.withUnsafeMutableBytes { raw in
            var frame = 0
            while WALFrame.offset(frame, pageSize: pageSize) + Int64(pageSize) <= Int64(raw.count) {
                let start = raw.baseAddress! + Int(WALFrame.offset(frame, pageSize: pageSize))
                chain = WALFrame.seal(start, pageSize: pageSize, salt: header.salt, previousChain: chain)
                frame += 1
            }
        }
        return bytes
    }
}
