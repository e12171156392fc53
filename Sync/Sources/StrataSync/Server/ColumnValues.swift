// ColumnValues: attribute values between a store's row values and the zone's columns: into COPY
// text for exports, out of result rows for imports, and the SQL that converts the staging and
// reading forms (dates as microseconds, decimals as text) to and from the column types.
//
// Owns: the one mapping per attribute type in each direction, so that what one machine writes
// another reads back as the same value (dates at PostgreSQL's microsecond precision). Never
// resolves references (the exporter and importer map object IDs to global IDs).

import Foundation
import PostgresNIO
import Strata

enum ColumnValues {
    /// The staging column's type for a column type (dates stage as microseconds since 1970).
    static func stagingType(_ type: ColumnType) -> String {
        type == .timestamptz ? "bigint" : type.rawValue
    }

    /// The SQL turning staging column `column` of `alias` into the column's type.
    static func fromStaging(_ alias: String, _ column: String, _ type: ColumnType) -> String {
        let value = "\(alias).\(SQL.quote(column))"
        return type == .timestamptz ? "(TIMESTAMPTZ 'epoch' + \(value) * INTERVAL '1 microsecond')" : value
    }

    /// The SQL reading column `column` in the form `decode` takes.
    static func reading(_ column: String, _ type: ColumnType) -> String {
        let name = SQL.quote(column)
        switch type {
        case .timestamptz: return "(extract(epoch FROM \(name)) * 1000000)::bigint"
        case .numeric: return "\(name)::text"
        default: return name
        }
    }

    /// Writes `value` of an attribute of `type` as COPY text; `what` names it in errors. Dates are
    /// microseconds since 1970 for a staging column, or timestamptz text for the zone's own column
    /// (`timestamps`).
    static func write(_ value: RowValue, _ type: AttributeDescription.AttributeType, into text: inout CopyText, timestamps: Bool = false,
                      objectIDs: (ManagedObjectID) throws -> UUID?, _ what: @autoclosure () -> String) throws {
        if timestamps, case .date(let date) = value {
            try text.timestamp(date, what())
            return
        }
        switch value {
        case .null: text.null()
        case .integer(let n): text.integer(n)
        case .double(let d): text.double(d)
        case .float(let f): text.float(f)
        case .decimal(let d): try text.text(d.description, what())
        case .string(let s): try text.text(s, what())
        case .boolean(let b): text.boolean(b)
        case .date(let d): try text.date(d, what())
        case .data(let d): text.bytes(d)
        case .uuid(let u): text.uuid(u)
        case .uri(let u): try text.text(u.absoluteString, what())
        case .objectID(let id):
            if let gid = try objectIDs(id) { text.uuid(gid) } else { text.null() }
        case .objectIDs:
            throw SyncError(.unsupportedValue, "\(what()) is a to-many value where an attribute of type \(type) was expected")
        }
    }

    /// The row value of `cell`, read with `reading(_:_:)`, for an attribute of `type`.
    static func read(_ cell: PostgresCell, _ type: AttributeDescription.AttributeType,
                     objectIDs: (UUID) throws -> ManagedObjectID?, _ what: @autoclosure () -> String) throws -> RowValue {
        guard cell.bytes != nil else { return .null }
        do {
            switch type {
            case .integer16: return .integer(Int64(try cell.decode(Int16.self)))
            case .integer32: return .integer(Int64(try cell.decode(Int32.self)))
            case .integer64: return .integer(try cell.decode(Int64.self))
            case .double: return .double(try cell.decode(Double.self))
            case .float: return .float(try cell.decode(Float.self))
            case .decimal:
                let text = try cell.decode(String.self)
                guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                    throw SyncError(.corrupt, "\(what()) holds \(text), not a decimal")
                }
                return .decimal(decimal)
            case .string: return .string(try cell.decode(String.self))
            case .boolean: return .boolean(try cell.decode(Bool.self))
            case .date: return .date(Date(timeIntervalSince1970: Double(try cell.decode(Int64.self)) / 1_000_000))
            case .binaryData, .transformable: return .data(try cell.decode(Data.self))
            case .uuid: return .uuid(try cell.decode(UUID.self))
            case .uri:
                let text = try cell.decode(String.self)
                guard let url = URL(string: text) else { throw SyncError(.corrupt, "\(what()) holds \(text), not a URL") }
                return .uri(url)
            case .objectID:
                return try objectIDs(try cell.decode(UUID.self)).map(RowValue.objectID) ?? .null
            }
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.corrupt, "\(what()) cannot be read as \(type): \(error)", underlying: error)
        }
    }
}
