// ManagedObjectContext+Validation: the checks a save makes before writing anything.
//
// Owns: required values, attribute rules (range, length, pattern), relationship counts, deny delete
// rules, references to objects the save deletes, and the objects' own validateFor… hooks; every
// problem of one save is collected into one thrown error that lists each object and property.
// Never changes objects.

import Foundation
import StrataCore

extension ManagedObjectContext {
    /// Throws one `.validation` error listing every problem of the pending changes (`order` holds
    /// the inserted, updated and deleted sets as arrays).
    func validatePendingChanges(_ order: SaveOrder) throws {
        var problems: [StrataError] = []
        func validate(_ object: ManagedObject) {
            problems += propertyProblems(of: object)
            do {
                if object.state.isInserted { try object.validateForInsert() } else { try object.validateForUpdate() }
            } catch {
                problems.append(asValidationError(error, object))
            }
        }
        for object in order.inserted where !object.state.isDeleted { validate(object) }
        for object in order.updated where !object.state.isDeleted { validate(object) }
        if !order.deleted.isEmpty {
            for object in order.inserted where !object.state.isDeleted { problems += danglingReferences(of: object) }
            for object in order.updated where !object.state.isDeleted { problems += danglingReferences(of: object) }
        }
        for object in order.deleted {
            problems += denyProblems(of: object)
            do { try object.validateForDelete() } catch { problems.append(asValidationError(error, object)) }
        }
        guard !problems.isEmpty else { return }
        let summary = problems.prefix(3).map(\.message).joined(separator: "; ") + (problems.count > 3 ? "; …" : "")
        var error = StrataError(.validation, "save of \(debugName) failed validation with \(problems.count) problem\(problems.count == 1 ? "" : "s"): \(summary)")
        error.details = problems
        throw error
    }

    private func asValidationError(_ error: any Error, _ object: ManagedObject) -> StrataError {
        if let strata = error as? StrataError { return strata }
        return StrataError(.validation, "\(object.entity.name) \(object.objectID): \(error)")
    }

    private func propertyProblems(of object: ManagedObject) -> [StrataError] {
        // Built only for a problem: an object ID's description is its URI, costly to build.
        Self.propertyProblems(of: object.values, entity: object.entity) { "\(object.entity.name) \(object.objectID)" }
    }

    /// Every problem of one object's (or row's) values against its entity's rules: required
    /// values, attribute rules, relationship counts. `label` names the object in messages.
    static func propertyProblems(of values: [RowValue], entity: EntityDescription, label: () -> String) -> [StrataError] {
        propertyProblems(of: values, entity: entity, slots: entity.slotValidations.indices, label: label)
    }

    /// ``propertyProblems(of:entity:label:)`` for the values of `slots` only.
    static func propertyProblems(of values: [RowValue], entity: EntityDescription, slots: some Sequence<Int>,
                                 label: () -> String) -> [StrataError] {
        var problems: [StrataError] = []
        let validations = entity.slotValidations
        for slot in slots {
            switch validations[slot] {
            case .none:
                continue
            case .required:
                // The message is taken only when it is needed (binding it copied a string per slot).
                if values[slot].isNull, case .required(let message) = validations[slot] {
                    problems.append(StrataError(.validation, "\(label()): \(message)"))
                }
            case .attribute(let attribute):
                for violation in attribute.violations(of: values[slot]) {
                    problems.append(StrataError(.validation, "\(label()): \(violation)"))
                }
            case .toMany(let relationship):
                let count = values[slot].objectIDList.count
                if count == 0 && relationship.isOptional { continue }
                if count < max(relationship.minCount, relationship.isOptional ? 0 : 1) {
                    problems.append(StrataError(.validation, "\(label()): \(relationship.qualifiedName) has \(count) objects, fewer than the minimum \(max(relationship.minCount, 1))"))
                }
                if relationship.maxCount > 0 && count > relationship.maxCount {
                    problems.append(StrataError(.validation, "\(label()): \(relationship.qualifiedName) has \(count) objects, more than the maximum \(relationship.maxCount)"))
                }
            }
        }
        return problems
    }

    /// References to objects this save deletes (left by a relationship without an inverse, or
    /// a "no action" delete rule): the saved row would refer to nothing. Core Data's "dangling
    /// reference to an invalid object".
    private func danglingReferences(of object: ManagedObject) -> [StrataError] {
        var problems: [StrataError] = []
        for (slot, relationship) in object.entity.relationshipSlots where !relationship.isTransient {
            let deleted = object.values[slot].referencedObjectIDs.filter { id in registry[id].map { $0.state == .deleted || $0.state == .insertedThenDeleted } ?? false }
            if !deleted.isEmpty {
                problems.append(StrataError(.validation, "\(object.entity.name) \(object.objectID): \(relationship.qualifiedName) refers to \(deleted.map(\.description).joined(separator: ", ")), deleted by this save (a dangling reference to an invalid object: clear the relationship, or give the deleted side's inverse a nullify or cascade rule)"))
            }
        }
        return problems
    }

    private func denyProblems(of object: ManagedObject) -> [StrataError] {
        var problems: [StrataError] = []
        for (slot, relationship) in object.entity.relationshipSlots where relationship.deleteRule == .denyDeleteRule {
            let blocking = object.values[slot].referencedObjectIDs.filter { !(registry[$0]?.state.isDeleted ?? false) }
            if !blocking.isEmpty {
                problems.append(StrataError(.validation, "cannot delete \(object.entity.name) \(object.objectID): \(relationship.qualifiedName) has the deny rule and still refers to \(blocking.map(\.description).joined(separator: ", "))"))
            }
        }
        return problems
    }
}
