// ManagedObjectContext+Derived: computing derived attributes before a save validates and writes.
//
// Owns: evaluating each `Derivation` for the objects a save touches: the changed objects, and the
// objects whose aggregates over a to-many read a changed object (found through the inverse).
// Never validates or writes.

import Foundation

extension ManagedObjectContext {
    /// Recomputes every derived attribute of the changed objects and of objects aggregating them.
    func updateDerivedAttributes() throws {
        guard model?.hasDerivedAttributes ?? false else { return }
        var targets = changeTracker.inserted.set.union(changeTracker.updated.objects)
        for object in targets.union(changeTracker.deleted.objects) {
            for owner in try aggregatingOwners(of: object) where !owner.state.isDeleted { targets.insert(owner) }
        }
        for object in targets {
            for (slot, property) in object.entity.slots.enumerated() {
                guard let derived = property as? DerivedAttributeDescription else { continue }
                let value = try evaluate(derived, on: object)
                object.setPrimitive(value, slot: slot)
            }
        }
    }

    /// Objects with an aggregate derivation over a to-many that contains `object`.
    private func aggregatingOwners(of object: ManagedObject) throws -> [ManagedObject] {
        guard let model else { return [] }
        var owners: [ManagedObject] = []
        for entity in model.entities {
            for case let derived as DerivedAttributeDescription in entity.slots {
                guard case .aggregate(_, let relationshipName, _) = derived.derivation,
                      let relationship = entity.relationshipsByName[relationshipName],
                      let destination = relationship.destinationEntity, object.entity.isKindOf(entity: destination),
                      let inverse = relationship.inverseRelationship, !object.state.isFault,
                      let inverseSlot = object.entity.slotIndex[inverse.name] else { continue }
                var ids = object.values[inverseSlot].objectIDList
                if case .objectID(let id) = object.values[inverseSlot] { ids.append(id) }
                if let committed = object.committedValues {
                    ids += committed[inverseSlot].objectIDList
                    if case .objectID(let id) = committed[inverseSlot] { ids.append(id) }
                }
                owners += ids.map { self.object(with: $0) }.filter { $0.entity.isKindOf(entity: entity) }
            }
        }
        return owners
    }

    private func evaluate(_ derived: DerivedAttributeDescription, on object: ManagedObject) throws -> RowValue {
        let raw: RowValue
        switch derived.derivation {
        case .now:
            raw = .date(Date())
        case .keyPath(let path):
            raw = try value(at: path, of: object)
        case .lowercase(let path):
            if case .string(let s) = try value(at: path, of: object) { raw = .string(s.lowercased()) } else { raw = .null }
        case .canonical(let path):
            if case .string(let s) = try value(at: path, of: object) {
                raw = .string(s.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased())
            } else { raw = .null }
        case .aggregate(let function, let relationshipName, let attributeName):
            let members = try object.rowValue(forKey: relationshipName).objectIDList
                .map { self.object(with: $0) }.filter { !$0.state.isDeleted }
            if function == .count { raw = .integer(Int64(members.count)); break }
            let numbers = try members.compactMap { try Self.number(of: $0.rowValue(forKey: attributeName!)) }
            switch function {
            case .sum: raw = .double(numbers.reduce(0, +))
            case .min: raw = numbers.min().map(RowValue.double) ?? .null
            case .max: raw = numbers.max().map(RowValue.double) ?? .null
            case .avg: raw = numbers.isEmpty ? .null : .double(numbers.reduce(0, +) / Double(numbers.count))
            case .count: raw = .null
            }
        }
        return Self.converted(raw, to: derived)
    }

    private func value(at path: [String], of object: ManagedObject) throws -> RowValue {
        let first = try object.rowValue(forKey: path[0])
        guard path.count == 2 else { return first }
        guard case .objectID(let id) = first else { return .null }
        let related = self.object(with: id)
        if related.state.isDeleted { return .null }
        return try related.rowValue(forKey: path[1])
    }

    private static func number(of value: RowValue) -> Double? {
        switch value {
        case .integer(let v): return Double(v)
        case .double(let v): return v
        case .float(let v): return Double(v)
        case .decimal(let v): return NSDecimalNumber(decimal: v).doubleValue
        default: return nil
        }
    }

    /// Converts a computed value to the derived attribute's declared type.
    private static func converted(_ value: RowValue, to attribute: AttributeDescription) -> RowValue {
        guard let number = number(of: value) else { return value }
        switch attribute.type {
        case .integer16, .integer32, .integer64: return .integer(Int64(number.rounded(.towardZero)))
        case .double: return .double(number)
        case .float: return .float(Float(number))
        case .decimal: return .decimal(Decimal(number))
        default: return value
        }
    }
}
