// TreeName: the name of a tree in the catalog.
//
// Owns: what a tree name may be: 1 to 255 bytes of UTF-8, and never longer than the store's key
// limit (the catalog key is exactly these bytes). Must never accept an empty or over-long name.

/// The name of a tree, such as `"quakes"` (1–255 bytes of UTF-8).
public struct TreeName: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }
    public static func < (a: TreeName, b: TreeName) -> Bool { a.rawValue < b.rawValue }

    static let maxBytes = 255

    /// The catalog key, after checking the name's length against 255 bytes and `keyLimit`.
    func catalogKey(keyLimit: Int = Int.max) throws -> [UInt8] {
        let bytes = Array(rawValue.utf8)
        let limit = min(TreeName.maxBytes, keyLimit)
        guard !bytes.isEmpty, bytes.count <= limit else {
            throw StrataError(.invalidArgument, "tree name \"\(rawValue)\" must be 1 to \(limit) bytes of UTF-8 (it is \(bytes.count))")
        }
        return bytes
    }
}
