// FetchSortDescriptor: the order of fetch results, by key path, direction and string comparison.
//
// Owns: the string-keyed sort descriptor (Core Data's NSSortDescriptor), the bridge from
// Foundation's `SortDescriptor` over `@Managed` key paths, and the comparison of two row values
// for one descriptor (nil first when ascending, as SQLite orders NULL). Never reads rows.

import Foundation
import StrataCore

/// Something a fetch request can sort by: a ``FetchSortDescriptor`` or Foundation's
/// `SortDescriptor` over a `@Managed` key path. Do not declare new conformances.
public protocol FetchSortDescribing {
    /// The equivalent key-based descriptor (throws when a key path names no `@Managed` property).
    func fetchSortDescriptor() throws -> FetchSortDescriptor
}

/// A sort key (a property name or a key path through to-one relationships), a direction and, for
/// strings, how to compare them.
///
/// ```swift
/// request.sortDescriptors = [FetchSortDescriptor(key: "region.name", ascending: true, comparison: .localizedCaseInsensitive),
///                            FetchSortDescriptor(key: "time", ascending: false)]
/// ```
public struct FetchSortDescriptor: Sendable, Hashable, CustomStringConvertible, FetchSortDescribing {
    /// How strings are compared (Core Data's `compare:`, `caseInsensitiveCompare:`, … selectors).
    public enum StringComparison: Sendable, Hashable {
        /// By Unicode scalar values (`compare:`).
        case binary
        /// Ignoring case (`caseInsensitiveCompare:`).
        case caseInsensitive
        /// By the current locale's rules (`localizedCompare:`).
        case localized
        /// By the current locale's rules, ignoring case (`localizedCaseInsensitiveCompare:`).
        case localizedCaseInsensitive
        /// As Finder sorts: locale rules, ignoring case, numbers by value (`localizedStandardCompare:`).
        case localizedStandard
        /// The string comparator of a Foundation `SortDescriptor`.
        case standard(String.StandardComparator)
    }

    public let key: String
    public let ascending: Bool
    public let comparison: StringComparison

    public init(key: String, ascending: Bool = true, comparison: StringComparison = .binary) {
        self.key = key
        self.ascending = ascending
        self.comparison = comparison
    }

    public func fetchSortDescriptor() throws -> FetchSortDescriptor { self }

    public var description: String { "\(key) \(ascending ? "ascending" : "descending")\(comparison == .binary ? "" : " (\(comparison))")" }

    /// The order of two values under this descriptor, direction included.
    func order(_ a: RowValue, _ b: RowValue) -> ComparisonResult {
        let base: ComparisonResult
        if case .string(let x) = a, case .string(let y) = b, comparison != .binary {
            base = Self.compareStrings(x, y, comparison)
        } else {
            base = RowValue.compare(a, b)
        }
        guard !ascending else { return base }
        switch base {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    private static func compareStrings(_ x: String, _ y: String, _ comparison: StringComparison) -> ComparisonResult {
        switch comparison {
        case .binary: return x < y ? .orderedAscending : (x > y ? .orderedDescending : .orderedSame)
        case .caseInsensitive: return x.compare(y, options: .caseInsensitive)
        case .localized: return x.compare(y, options: [], range: nil, locale: .current)
        case .localizedCaseInsensitive: return x.compare(y, options: .caseInsensitive, range: nil, locale: .current)
        case .localizedStandard: return x.compare(y, options: [.caseInsensitive, .numeric], range: nil, locale: .current)
        case .standard(var comparator):
            comparator.order = .forward
            return comparator.compare(x, y)
        }
    }
}

extension SortDescriptor: FetchSortDescribing where Compared: ManagedObject {
    /// The key-based descriptor for a `SortDescriptor` over a `@Managed` property of `Compared`.
    public func fetchSortDescriptor() throws -> FetchSortDescriptor {
        guard let keyPath else {
            throw StrataError(.invalidArgument, "a SortDescriptor<\(Compared.self)> without a key path cannot sort a fetch")
        }
        let key = try ManagedObjectModel.propertyName(of: keyPath, on: Compared.self, from: "SortDescriptor<\(Compared.self)>")
        let comparison: FetchSortDescriptor.StringComparison = stringComparator.map { .standard($0) } ?? .binary
        return FetchSortDescriptor(key: key, ascending: order == .forward, comparison: comparison)
    }
}
