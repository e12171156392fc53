// PageNumber and PageSize: the typed identities of pages.
//
// Owns: the rules for what a page number and a page size may be. Page 0 is always the file
// header; no tree, overflow or free-list page is ever numbered 0, so 0 doubles as "no page".

/// The number of a page in the store file (page N starts at byte N × page size).
import StrataCore

public struct PageNumber: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    /// Page 0, the file header; as a link it means "no page".
    public static let none = PageNumber(0)

    public static func < (a: PageNumber, b: PageNumber) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "#\(rawValue)" }
}

/// A page size: a power of two from 1 KiB to 64 KiB, fixed when a store is created.
public struct PageSize: Hashable, Sendable, CustomStringConvertible {
    public let bytes: Int

    /// The default, 4 KiB.
    public static let `default` = PageSize(uncheckedBytes: 4096)
    public static let minimum = 1024
    public static let maximum = 65536

    /// Validates `bytes`, throwing `.invalidArgument` unless it is a power of two in 1 KiB–64 KiB.
    public init(_ bytes: Int) throws {
        guard bytes >= PageSize.minimum, bytes <= PageSize.maximum, bytes & (bytes - 1) == 0 else {
            throw StrataError(.invalidArgument, "page size \(bytes) is not a power of two between 1024 and 65536")
        }
        self.bytes = bytes
    }

    init(uncheckedBytes: Int) { self.bytes = uncheckedBytes }

    /// True if `bytes` is a valid page size.
    static func isValid(_ bytes: Int) -> Bool {
        bytes >= minimum && bytes <= maximum && bytes & (bytes - 1) == 0
    }

    public var description: String { "\(bytes)" }
}
