// ModelValidation: resolves names in a model and finds everything wrong with it.
//
// Owns: the rules a model must satisfy before use: unique entity and property names, acyclic
// inheritance, resolvable destinations and mutual inverses, constraints and indexes naming real
// properties, parsable derivations, defaults of the declared type. Each problem names the entity
// and property. It resolves destination/inverse names and computes defaults as it goes; it never
// freezes anything (ManagedObjectModel.freeze does).

import Foundation
import StrataCore

struct ModelValidation {
    let model: ManagedObjectModel

    static func error(_ problems: [String]) -> StrataError {
        var error = StrataError(.invalidModel, problems.count == 1 ? problems[0]
                                : "\(problems.count) problems: " + problems.joined(separator: "; "))
        error.details = problems.map { StrataError(.invalidModel, $0) }
        return error
    }

    func problems() -> [String] {
        var found: [String] = []
        var byName: [String: EntityDescription] = [:]
        for entity in model.entities {
            if entity.name.isEmpty { found.append("an entity has no name"); continue }
            if byName[entity.name] != nil { found.append("duplicate entity name \(entity.name)") }
            byName[entity.name] = entity
        }
        for entity in model.entities {
            found += inheritanceProblems(entity, byName: byName)
        }
        // Property checks walk inheritance chains, so they run only on an acyclic model.
        guard found.isEmpty else { return found }
        for entity in model.entities {
            found += propertyNameProblems(entity)
            for property in entity.properties {
                property.entity = entity
                if let relationship = property as? RelationshipDescription {
                    found += relationshipProblems(relationship, in: entity, byName: byName)
                } else if let attribute = property as? AttributeDescription {
                    found += attributeProblems(attribute, in: entity)
                } else if let fetched = property as? FetchedPropertyDescription {
                    let name = fetched.fetchRequest?.entity?.name ?? fetched.fetchRequest?.entityName
                    if name.map({ byName[$0] == nil }) ?? true {
                        found.append("entity \(entity.name), fetched property \(fetched.name): its fetch request names \(name.map { "entity \($0), which is not in the model" } ?? "no entity")")
                    }
                }
            }
            found += constraintProblems(entity)
            // Slot positions are kept in 16 bits (SlotValue).
            var slots = 0
            var chain: EntityDescription? = entity
            while let link = chain { slots += link.properties.count; chain = link.superentity }
            if slots > 1 << 16 {
                found.append("entity \(entity.name) has \(slots) properties with its superentities'; at most 65,536 are supported")
            }
        }
        return found
    }

    private func inheritanceProblems(_ entity: EntityDescription, byName: [String: EntityDescription]) -> [String] {
        var seen: [ObjectIdentifier] = [ObjectIdentifier(entity)]
        var current = entity.superentity
        while let parent = current {
            if byName[parent.name] !== parent {
                return ["entity \(entity.name): superentity \(parent.name) is not in the model"]
            }
            if seen.contains(ObjectIdentifier(parent)) {
                return ["entity \(entity.name): inheritance cycle through \(parent.name)"]
            }
            seen.append(ObjectIdentifier(parent))
            current = parent.superentity
        }
        return []
    }

    private func propertyNameProblems(_ entity: EntityDescription) -> [String] {
        var found: [String] = []
        var names: Set<String> = []
        for property in entity.allProperties {
            if property.name.isEmpty { found.append("entity \(entity.name): a property has no name") }
            else if !names.insert(property.name).inserted {
                found.append("entity \(entity.name): duplicate property name \(property.name)")
            }
        }
        return found
    }

    private func relationshipProblems(_ relationship: RelationshipDescription, in entity: EntityDescription,
                                      byName: [String: EntityDescription]) -> [String] {
        let where_ = "entity \(entity.name), relationship \(relationship.name)"
        let destinationName = relationship.destinationEntity?.name ?? relationship.destinationEntityName
        guard let destinationName, let destination = byName[destinationName] else {
            return ["\(where_): destination entity \(destinationName ?? "(none)") is not in the model"]
        }
        if relationship.destinationEntity !== destination { relationship.destinationEntity = destination }
        if relationship.maxCount < 0 || relationship.minCount < 0 || (relationship.maxCount > 0 && relationship.minCount > relationship.maxCount) {
            return ["\(where_): minCount \(relationship.minCount) / maxCount \(relationship.maxCount) are inconsistent"]
        }
        guard let inverseName = relationship.inverseRelationship?.name ?? relationship.inverseName else { return [] }
        guard let inverse = destination.relationshipsByName[inverseName] else {
            return ["\(where_): inverse \(destinationName).\(inverseName) does not exist"]
        }
        if relationship.inverseRelationship !== inverse { relationship.inverseRelationship = inverse }
        let inverseDestination = inverse.destinationEntity?.name ?? inverse.destinationEntityName
        // The inverse may point to this entity, an ancestor or a descendant (Core Data accepts
        // all three; Apple's own Photos model has an inverse naming a subentity).
        guard let inverseDestination, let back = byName[inverseDestination], entity.isKindOf(entity: back) || back.isKindOf(entity: entity) else {
            return ["\(where_): inverse \(destinationName).\(inverseName) points to \(inverseDestination ?? "(none)"), not \(entity.name)"]
        }
        let backName = inverse.inverseRelationship?.name ?? inverse.inverseName
        if backName == nil {
            // A one-sided inverse declaration is completed, as Xcode does.
            inverse.inverseName = relationship.name
            inverse.inverseRelationship = relationship
        } else if backName != relationship.name {
            return ["\(where_): inverse \(destinationName).\(inverseName) names \(backName!) as its inverse, not \(relationship.name)"]
        }
        return []
    }

    private func attributeProblems(_ attribute: AttributeDescription, in entity: EntityDescription) -> [String] {
        let where_ = "entity \(entity.name), attribute \(attribute.name)"
        var found: [String] = []
        if let derived = attribute as? DerivedAttributeDescription {
            if let derivation = Derivation.parse(derived.derivationExpression) {
                derived.derivation = derivation
                found += derivationProblems(derivation, of: derived, in: entity)
            } else {
                found.append("\(where_): unsupported derivation expression \"\(derived.derivationExpression)\"")
            }
        }
        do {
            attribute.defaultRowValue = try RowValue.attributeValue(attribute.defaultValue, for: attribute)
        } catch let error as StrataError {
            found.append("\(where_): default value: \(error.message)")
        } catch {
            found.append("\(where_): default value: \(error)")
        }
        if let pattern = attribute.regularExpression {
            attribute.compiledPattern = AttributeDescription.wholeValuePattern(pattern)
            if attribute.compiledPattern == nil { found.append("\(where_): invalid regular expression /\(pattern)/") }
        }
        return found
    }

    private func derivationProblems(_ derivation: Derivation, of attribute: DerivedAttributeDescription,
                                    in entity: EntityDescription) -> [String] {
        let where_ = "entity \(entity.name), derived attribute \(attribute.name)"
        let properties = entity.propertiesByName
        func checkPath(_ path: [String]) -> [String] {
            guard let first = properties[path[0]] else { return ["\(where_): \(path[0]) is not a property of \(entity.name)"] }
            guard path.count == 2 else { return [] }
            guard let relationship = first as? RelationshipDescription, !relationship.isToMany else {
                return ["\(where_): \(path[0]) is not a to-one relationship"]
            }
            let destinationName = relationship.destinationEntity?.name ?? relationship.destinationEntityName
            let destination = model.entities.first { $0.name == destinationName }
            guard destination?.propertiesByName[path[1]] != nil else {
                return ["\(where_): \(path.joined(separator: ".")) does not name a property"]
            }
            return []
        }
        switch derivation {
        case .now: return []
        case .keyPath(let path), .lowercase(let path), .canonical(let path): return checkPath(path)
        case .aggregate(_, let relationshipName, let attributeName):
            guard let relationship = properties[relationshipName] as? RelationshipDescription, relationship.isToMany else {
                return ["\(where_): \(relationshipName) is not a to-many relationship of \(entity.name)"]
            }
            guard let attributeName else { return [] }
            let destinationName = relationship.destinationEntity?.name ?? relationship.destinationEntityName
            let destination = model.entities.first { $0.name == destinationName }
            guard destination?.attributesByName[attributeName] != nil else {
                return ["\(where_): \(relationshipName).\(attributeName) does not name an attribute"]
            }
            return []
        }
    }

    private func constraintProblems(_ entity: EntityDescription) -> [String] {
        var found: [String] = []
        let properties = entity.propertiesByName
        for constraint in entity.uniquenessConstraints {
            if constraint.isEmpty { found.append("entity \(entity.name): an empty uniqueness constraint") }
            for name in constraint {
                guard let property = properties[name] else {
                    found.append("entity \(entity.name), uniqueness constraint: \(name) is not a property"); continue
                }
                if let relationship = property as? RelationshipDescription, relationship.isToMany {
                    found.append("entity \(entity.name), uniqueness constraint: \(name) is a to-many relationship")
                }
            }
        }
        for index in entity.indexes {
            if index.elements.isEmpty { found.append("entity \(entity.name), index \(index.name): no elements") }
            for element in index.elements {
                let name = element.property?.name ?? element.propertyName
                if properties[name] == nil {
                    found.append("entity \(entity.name), index \(index.name): \(name) is not a property")
                }
            }
        }
        return found
    }
}
