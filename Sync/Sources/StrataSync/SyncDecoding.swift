// SyncDecoding: every decoder of bytes StrataSync reads from outside, reachable from one place for
// the `sync-decoders` fuzz target (Fuzz/): the store's side-table entries (`sync.state` JSON,
// `sync.global` and `sync.local` identity entries, FORMAT.md §19.7) and attribute values in the
// zone's result rows (PostgreSQL's binary cells, of any column type a server may describe).
//
// Owns: nothing but the routing, as SPI (`StrataFuzzing`): each entry calls the decoder the
// engine itself uses. Never talks to a server or a store.

import Foundation
import NIOCore
import PostgresNIO
import Strata

@_spi(StrataFuzzing)
public enum SyncDecoding {
    /// A `sync.state` side-table entry.
    public static func syncState(_ bytes: [UInt8]) throws {
        _ = try SyncState.decode(bytes, zone: "fuzz", store: "fuzz")
    }

    /// A `sync.global` side-table entry (primary key and entity name).
    public static func globalEntry(_ bytes: [UInt8]) throws -> (entity: String, key: Int64) {
        let object = try IdentityMap.decodeGlobalEntry(bytes, gid: UUID(), store: "fuzz")
        return (object.entity, object.key)
    }

    /// A `sync.local` side-table entry (a global ID).
    public static func localEntry(_ bytes: [UInt8]) throws -> UUID {
        try IdentityMap.decodeLocalEntry(bytes, key: 0, store: "fuzz")
    }

    /// The column types a server may describe a cell with.
    public static let dataTypes: [PostgresDataType] = [.bool, .int2, .int4, .int8, .float4, .float8, .numeric, .text, .varchar,
                                                       .bytea, .uuid, .timestamptz, .jsonb, .null]

    /// An attribute value of `type` in a binary result cell of `dataType`, as an import reads it;
    /// nil bytes are SQL NULL.
    public static func attributeValue(_ bytes: [UInt8]?, dataType: PostgresDataType, type: AttributeDescription.AttributeType) throws -> RowValue {
        let cell = PostgresCell(bytes: bytes.map { ByteBuffer(bytes: $0) }, dataType: dataType, format: .binary, columnName: "fuzz", columnIndex: 0)
        return try ColumnValues.read(cell, type, objectIDs: { _ in nil }, "the fuzz cell")
    }
}
