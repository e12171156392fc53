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
        try derived.derivedValue(DerivationInputs(
            ownValue: { try object.rowValue(forKey: $0) },
            relatedValue: { id, name in
                let related = self.object(with: id)
                return related.state.isDeleted ? nil : try related.rowValue(forKey: name)
            },
            relatedExists: { !self.object(with: $0).state.isDeleted }))
    }
}
