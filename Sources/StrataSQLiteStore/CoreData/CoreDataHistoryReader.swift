// CoreDataHistoryReader: a Core Data store's persistent history (`ATRANSACTION`, `ACHANGE`,
// `ATRANSACTIONSTRING`) as Strata's recorded transactions, so a `.sqlite` store answers history
// requests with the transactions Core Data recorded.
//
// A transaction row has its timestamp (`ZTIMESTAMP`, seconds since 2001) and its author,
// context name, bundle and process identifiers, each either in its own text column (`ZAUTHOR`)
// or as a key into `ATRANSACTIONSTRING.ZNAME` (`ZAUTHORTS`). A change row names its transaction
// (`ZTRANSACTIONID`), its type (`ZCHANGETYPE`: 0 insert, 1 update, 2 delete) and its object
// (`ZENTITY`, the entity number of Z_PRIMARYKEY, and `ZENTITYPK`). Transactions keep their
// `Z_PK` as position (token), changes their `Z_PK` as change ID.
//
// A delete's tombstone is in `ZTOMBSTONE0`, `ZTOMBSTONE1`, …: the values of the entity's
// attributes marked to be preserved in history (inherited ones included), taken in the order of
// their names (checked against real stores, where each column's value type and content match the
// attribute so named). A value that does not read as its attribute is left out of the tombstone.
//
// Owns: that mapping. What Core Data keeps in a form not documented is left out and said so:
// an update's `ZCOLUMNS` bitmap is not decoded (the update names every persistent property, as
// Strata does when the old values are unknown). Changes of entities the model lacks are
// skipped. Never writes.

import Foundation
import StrataCore
import StrataGraph

struct CoreDataHistoryReader {
    let database: SQLiteDatabase
    let layout: CoreDataStoreLayout
    let store: StoreIdentity
    /// Decodes tombstone values as the attributes' columns are decoded.
    private let values: CoreDataRowReader

    init(database: SQLiteDatabase, layout: CoreDataStoreLayout, storeIdentifier: String) {
        self.database = database
        self.layout = layout
        store = StoreIdentity.named(storeIdentifier)
        values = CoreDataRowReader(database: database, layout: layout, storeIdentifier: storeIdentifier)
    }

    /// The attributes whose values a delete of `entity` keeps, in tombstone column order.
    static func tombstoneAttributes(of entity: EntityDescription) -> [AttributeDescription] {
        entity.attributesByName.values.filter { $0.preservesValueInHistoryOnDeletion && !$0.isTransient }.sorted { $0.name < $1.name }
    }

    /// Every transaction, oldest first, with its changes.
    func read() throws -> [RecordedTransaction] {
        guard let transactionsEntry = database.table("ATRANSACTION"), let changesEntry = database.table("ACHANGE") else { return [] }
        let transactionColumns = try CoreDataTableColumns(transactionsEntry, file: database.path)
        let changeColumns = try CoreDataTableColumns(changesEntry, file: database.path)
        var strings: [Int64: String] = [:]
        if database.table("ATRANSACTIONSTRING") != nil {
            let entry = database.table("ATRANSACTIONSTRING")!
            let columns = try CoreDataTableColumns(entry, file: database.path)
            if let name = columns.index(of: "ZNAME") {
                try database.forEachRow(inTable: entry.name) { key, values in
                    if name < values.count, case .text(let text) = values[name] { strings[key] = text }
                    return true
                }
            }
        }
        // Entities by Core Data's number (the layout's concrete entities).
        var entities: [Int64: EntityDescription] = [:]
        for reading in layout.readings.values { entities[reading.number] = reading.entity }
        var changesByTransaction: [Int64: [(id: Int64, change: RecordedChange)]] = [:]
        let type = changeColumns.index(of: "ZCHANGETYPE"), entity = changeColumns.index(of: "ZENTITY")
        let primaryKey = changeColumns.index(of: "ZENTITYPK"), transaction = changeColumns.index(of: "ZTRANSACTIONID")
        var tombstoneColumns: [Int] = []
        while let column = changeColumns.index(of: "ZTOMBSTONE\(tombstoneColumns.count)") { tombstoneColumns.append(column) }
        var tombstoneAttributes: [ObjectIdentifier: [AttributeDescription]] = [:]
        try database.forEachRow(inTable: changesEntry.name) { key, values in
            func integer(_ column: Int?) -> Int64? {
                guard let column, column < values.count, case .integer(let value) = values[column] else { return nil }
                return value
            }
            guard let owner = integer(transaction), let number = integer(entity), let pk = integer(primaryKey),
                  let rawType = integer(type) else {
                throw StrataError(.corrupt, "\(database.path): ACHANGE row \(key) does not name a transaction, entity, object and change type")
            }
            guard let changeType = PersistentHistoryChangeType(rawValue: Int(rawType)) else {
                throw StrataError(.corrupt, "\(database.path): ACHANGE row \(key) has the change type \(rawType) (0, 1 or 2 expected)")
            }
            guard let changed = entities[number] else { return true }   // an entity the model lacks
            var change = RecordedChange(changeType: changeType, objectID: ManagedObjectID(IDScope.permanent(changed, in: store), primaryKey: pk))
            if changeType == .update {
                change.updatedProperties = changed.slots.filter { !$0.isTransient && !($0 is DerivedAttributeDescription) }.map(\.name)
            }
            if changeType == .delete, !tombstoneColumns.isEmpty {
                let attributes = tombstoneAttributes[ObjectIdentifier(changed)] ?? Self.tombstoneAttributes(of: changed)
                tombstoneAttributes[ObjectIdentifier(changed)] = attributes
                for (index, (attribute, column)) in zip(attributes, tombstoneColumns).enumerated() where column < values.count {
                    if let value = try? self.values.value(values[column], of: attribute, table: "ACHANGE", key: key, column: "ZTOMBSTONE\(index)") {
                        change.tombstone.append((attribute.name, value))
                    }
                }
            }
            changesByTransaction[owner, default: []].append((key, change))
            return true
        }
        var transactions: [RecordedTransaction] = []
        try database.forEachRow(inTable: transactionsEntry.name) { key, values in
            func text(_ name: String) -> String? {
                if let column = transactionColumns.index(of: "Z" + name), column < values.count, case .text(let value) = values[column] { return value }
                if let column = transactionColumns.index(of: "Z" + name + "TS"), column < values.count, case .integer(let id) = values[column] { return strings[id] }
                return nil
            }
            var timestamp = Date(timeIntervalSinceReferenceDate: 0)
            if let column = transactionColumns.index(of: "ZTIMESTAMP"), column < values.count {
                switch values[column] {
                case .real(let seconds): timestamp = Date(timeIntervalSinceReferenceDate: seconds)
                case .integer(let seconds): timestamp = Date(timeIntervalSinceReferenceDate: Double(seconds))
                default: break
                }
            }
            var changes = (changesByTransaction[key] ?? []).sorted { $0.id < $1.id }
            let first = changes.first?.id ?? 0
            for index in changes.indices { changes[index].change.position = Int(changes[index].id - first) }
            transactions.append(RecordedTransaction(
                generation: UInt64(max(key, 0)), timestamp: timestamp, author: text("AUTHOR"), contextName: text("CONTEXTNAME"),
                bundleID: text("BUNDLEID") ?? "", processID: text("PROCESSID") ?? "",
                firstChangeID: first, changeCount: Int((changes.last?.id ?? first - 1) - first + 1), changes: changes.map(\.change)))
            return true
        }
        return transactions
    }
}
