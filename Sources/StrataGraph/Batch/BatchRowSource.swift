// BatchRowSource: the rows of a batch insert, one at a time, from whatever supplies them.
//
// Owns: calling the request's handler (or walking its dictionaries) once per row and turning
// each into a SuppliedRow through BatchRowBuilder, so a request's rows can be taken a part at
// a time instead of all at once. A bad key or value throws, naming the entity, key and row.
// Never reads or writes a store.

import Foundation

struct BatchRowSource {
    private let builder: BatchRowBuilder
    private let source: BatchInsertRequest.Source
    private let entity: EntityDescription
    /// The position of the next row in the request (for messages): the rows given so far.
    private(set) var index = 0
    private var finished = false
    /// The dictionary a `dictionaryHandler` fills, made once.
    private var dictionary: BatchRowDictionary?
    /// The object a `managedObjectHandler` fills, made once and set back to the defaults before
    /// each call (an object per row would be allocated and freed a hundred thousand times per
    /// request).
    private var object: ManagedObject?

    init(request: BatchInsertRequest, entity: EntityDescription) throws {
        builder = try BatchRowBuilder(entity: entity)
        source = request.source
        self.entity = entity
    }

    /// The next row, or nil once the source has none (the handler returned `true`).
    mutating func next() throws -> SuppliedRow? {
        guard let row = try make() else { return nil }
        index += 1
        return row
    }

    /// Row `index`, or nil at the end.
    private mutating func make() throws -> SuppliedRow? {
        if finished { return nil }
        switch source {
        case .objects(let dictionaries):
            guard index < dictionaries.count else { finished = true; return nil }
            return try builder.row(from: dictionaries[index], index: index)
        case .dictionaryHandler(let handler):
            let dictionary = self.dictionary ?? BatchRowDictionary(builder: builder)
            self.dictionary = dictionary
            dictionary.begin(index: index)
            if handler(dictionary) { finished = true; return nil }
            if let problem = dictionary.problem { throw problem }
            return dictionary.row
        case .managedObjectHandler(let handler):
            let object = self.object ?? entity.managedObjectClass.init(entity: entity, insertInto: nil)
            self.object = object
            object.values = entity.defaultRow
            object.changedSlots = []
            if handler(object) { finished = true; return nil }
            return try builder.row(from: object, index: index)
        }
    }
}
