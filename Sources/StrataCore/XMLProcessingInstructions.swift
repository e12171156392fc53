// XMLProcessingInstructions: finding the processing instructions FoundationXML cannot be given.
// swift-corelibs-foundation's parser crashes (strlen of a null pointer) on a processing
// instruction without data (`<?target?>`), which libxml2 reports with no data; a damaged file can
// hold one anywhere, even where a well-formed document could not, since libxml2 goes on parsing
// after an error. Readers refuse such bytes before parsing them.
//
// Owns: the scan: every `<?` in the bytes (inside comments, CDATA and other instructions too:
// libxml2's reading of a damaged document may differ from any simpler one), then a target, then
// only white space before `?>`. Never parses XML.

public enum XMLProcessingInstructions {
    /// The byte offset and line of the first `<?` that opens an instruction without data (or
    /// without a target), or nil.
    public static func firstWithoutData(in bytes: [UInt8]) -> (offset: Int, line: Int)? {
        let lt = UInt8(ascii: "<"), question = UInt8(ascii: "?"), gt = UInt8(ascii: ">")
        let blank: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        var line = 1
        var index = 0
        while index + 1 < bytes.count {
            let byte = bytes[index]
            if byte == 0x0A { line += 1 }
            guard byte == lt, bytes[index + 1] == question else { index += 1; continue }
            var at = index + 2
            while at < bytes.count, !blank.contains(bytes[at]), bytes[at] != question, bytes[at] != gt, bytes[at] != lt { at += 1 }
            var data = at
            while data < bytes.count, blank.contains(bytes[data]) { data += 1 }
            let ends = data + 1 < bytes.count && bytes[data] == question && bytes[data + 1] == gt
            if at == index + 2 || ends { return (index, line) }
            index += 1
        }
        return nil
    }
}
