// ModelVersionHash: the hash that tells a store whether an entity's shape changed.
//
// Owns: the canonical text of an entity (name, inheritance, each stored property's name, type,
// optionality and cardinality, constraints, indexes) and its 64-bit XXH64. Default values,
// validation rules, user info and class names do not change the hash (as in Core Data).

import Foundation
@_spi(StrataInternal) import StrataCore

enum ModelVersionHash {
    static func hash(of entity: EntityDescription) -> Data {
        var value = xxh64(canonicalText(of: entity)).bigEndian
        return Data(bytes: &value, count: 8)
    }

    /// Hashes of the entity texts of a whole model, combined in name order.
    static func hash(ofModel entities: [EntityDescription]) -> Data {
        let text = entities.sorted { $0.name < $1.name }.map { canonicalText(of: $0) }.joined(separator: "\n")
        var value = xxh64(text).bigEndian
        return Data(bytes: &value, count: 8)
    }

    static func canonicalText(of entity: EntityDescription) -> String {
        var parts = ["entity \(entity.name)", "super \(entity.superentity?.name ?? "-")", "abstract \(entity.isAbstract)"]
        for property in entity.properties.sorted(by: { $0.name < $1.name }) where !property.isTransient {
            if let relationship = property as? RelationshipDescription {
                let destination = relationship.destinationEntity?.name ?? relationship.destinationEntityName ?? "?"
                parts.append("rel \(relationship.name) \(destination) min \(relationship.minCount) max \(relationship.maxCount) ordered \(relationship.isOrdered) optional \(relationship.isOptional)")
            } else if let attribute = property as? AttributeDescription {
                let derived = (attribute as? DerivedAttributeDescription).map { " derived \($0.derivationExpression)" } ?? ""
                parts.append("attr \(attribute.name) \(attribute.type) optional \(attribute.isOptional)\(derived)")
            }
        }
        parts.append("unique " + entity.uniquenessConstraints.map { $0.joined(separator: ",") }.sorted().joined(separator: ";"))
        parts.append("indexes " + entity.indexes.map { index in
            index.name + ":" + index.elements.map { $0.propertyName + ($0.isAscending ? "+" : "-") }.joined(separator: ",")
        }.sorted().joined(separator: ";"))
        return parts.joined(separator: "\n")
    }

    private static func xxh64(_ text: String) -> UInt64 {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { Checksum.xxh64($0.baseAddress!, count: $0.count, seed: 0x5354_5241_5441) }
    }
}
