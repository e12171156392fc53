// EntitySource: the Swift source for one entity: the whole class (`class` code generation) or an
// extension holding its properties (`category`), plus typed helpers for its to-many
// relationships, as Xcode's generator writes them.
//
// Owns: the shape of the declarations: `@Managed` stored properties in a class, computed
// properties over `Managed.value(of:…)` in a category, the superclass and `final`, inverses.
// Types and names come from AttributeSwiftType and SwiftNames. Never reads files.

import Foundation
import StrataGraph

/// How the generator treats an entity.
enum EntityCodeGeneration: Equatable {
    /// The whole class.
    case classDefinition
    /// Only an extension with the properties; the user owns the class.
    case category
    /// Nothing: the user owns class and properties (or the entity has no class).
    case manual

    init(setting: String?) {
        switch setting?.lowercased() {
        case "class": self = .classDefinition
        case "category": self = .category
        default: self = .manual
        }
    }
}

struct EntitySource {
    let entity: EntityDescription
    let generation: EntityCodeGeneration
    /// The generation of every entity of the model, by entity name (for superclasses and inverses).
    let generationOf: (EntityDescription) -> EntityCodeGeneration
    let access: String
    /// The access modifier with its space (none for `internal`, Swift's default).
    var accessPrefix: String { access == "internal" ? "" : access + " " }

    /// The Swift name of the class of `entity`, or nil when its objects are plain ManagedObjects.
    static func className(of entity: EntityDescription, generation: EntityCodeGeneration) -> String? {
        if generation != .manual { return ManagedClassNames.className(of: entity) }
        return ManagedClassNames.unqualified(entity.managedObjectClassName)
    }

    private func classNameOf(_ other: EntityDescription) -> String? {
        Self.className(of: other, generation: generationOf(other))
    }

    /// The name of the class generated for `entity`, checked.
    static func typeName(of entity: EntityDescription) throws -> String {
        try SwiftNames.typeName(ManagedClassNames.className(of: entity), entity: entity.name)
    }

    /// The properties the class declares: its own, and those of ancestors whose objects have no
    /// class of their own (a class for them would have declared them).
    private func declaredProperties() -> [PropertyDescription] {
        var properties = entity.properties
        var ancestor = entity.superentity
        while let current = ancestor, classNameOf(current) == nil {
            properties += current.properties
            ancestor = current.superentity
        }
        return properties.filter { !($0 is FetchedPropertyDescription) }.sorted { $0.name < $1.name }
    }

    /// The superclass: the class of the nearest ancestor that has one, else ManagedObject.
    private func superclassName() throws -> String {
        var ancestor = entity.superentity
        while let current = ancestor {
            if let name = classNameOf(current) { return try SwiftNames.typeName(name, entity: current.name) }
            ancestor = current.superentity
        }
        return "Strata.ManagedObject"
    }

    func source() throws -> String {
        let name = try Self.typeName(of: entity)
        var lines: [String] = []
        let abstract = entity.isAbstract ? ", abstract" : ""
        let setting = generation == .classDefinition ? "class" : "category"
        lines.append("// MARK: - \(name) (entity \(entity.name)\(abstract); code generation: \(setting))")
        lines.append("")
        let members = try declaredProperties().map { try member(for: $0, in: name) }
        if generation == .classDefinition {
            let finality = entity.subentities.isEmpty ? "final " : ""
            lines.append("\(accessPrefix)\(finality)class \(name): \(try superclassName()) {")
            // What `\(name).fetchRequest()` (Strata's, typed for every class) fetches before a
            // model in use has the class.
            lines.append("    \(accessPrefix)override class var defaultEntityName: Swift.String { \(AttributeSwiftType.stringLiteral(entity.name)) }")
            for member in members { lines.append(contentsOf: member.map { "    " + $0 }) }
            lines.append("}")
        } else {
            lines.append("extension \(name) {")
            for (index, member) in members.enumerated() {
                if index > 0 { lines.append("") }
                lines.append(contentsOf: member.map { "    " + $0 })
            }
            lines.append("}")
        }
        // `fetchRequest()` is Strata's, typed for every class (one declared here would be
        // ambiguous for subclasses).
        var helperNames: Set<String> = []
        for relationship in declaredProperties().compactMap({ $0 as? RelationshipDescription }) where relationship.isToMany {
            // Names differing only in their first letter's case would declare the same helpers.
            guard helperNames.insert(Self.helperSuffix(relationship.name)).inserted else { continue }
            lines.append("")
            lines.append(contentsOf: try accessors(for: relationship, in: name))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The declaration lines of one property.
    private func member(for property: PropertyDescription, in typeName: String) throws -> [String] {
        let name = try SwiftNames.propertyName(property.name, entity: entity.name)
        let type: String, initial: String?, inverse: String?
        var note: String?
        switch property {
        case let attribute as AttributeDescription:
            let swiftType = try AttributeSwiftType(attribute, entity: entity.name)
            (type, initial, inverse) = (swiftType.spelling, swiftType.initialValue, nil)
            note = swiftType.note
        case let relationship as RelationshipDescription:
            let destination = try destinationName(of: relationship)
            if relationship.isToMany {
                type = relationship.isOrdered ? "[\(destination)]" : "Swift.Set<\(destination)>"
                initial = "[]"
            } else {
                (type, initial) = ("\(destination)?", nil)
            }
            inverse = try inverseKeyPath(of: relationship, destination: destination)
        default:
            return []
        }
        let comment = note.map { ["/// \($0)."] } ?? []
        if generation == .classDefinition {
            let wrapper = inverse.map { "@Strata.Managed(inverse: \($0))" } ?? "@Strata.Managed"
            return comment + ["\(wrapper) \(accessPrefix)var \(name): \(type)\(initial.map { " = \($0)" } ?? "")"]
        }
        let fallback = initial ?? "nil"
        return comment + [
            "\(accessPrefix)var \(name): \(type) {",
            "    get { Strata.Managed.value(of: self, \\.\(name), forKey: \(AttributeSwiftType.stringLiteral(property.name)), default: \(fallback)) }",
            "    set { Strata.Managed.setValue(newValue, of: self, forKey: \(AttributeSwiftType.stringLiteral(property.name))) }",
            "}",
        ]
    }

    private func destinationName(of relationship: RelationshipDescription) throws -> String {
        guard let destination = relationship.destinationEntity,
              let name = classNameOf(destination) else { return "Strata.ManagedObject" }
        return try SwiftNames.typeName(name, entity: destination.name)
    }

    /// `\Destination.inverse`, on one side of each pair only: the compiler cannot check two
    /// wrappers whose key paths name each other (a circular reference). The to-many side of a
    /// one-to-many pair carries it, else the side whose entity and name sort first; and only a side
    /// whose destination's class is generated whole here (a class the user writes might lack the
    /// property). A relationship that is its own inverse carries none.
    private func inverseKeyPath(of relationship: RelationshipDescription, destination: String) throws -> String? {
        guard let inverse = relationship.inverseRelationship, inverse !== relationship,
              canCarryInverse(relationship) else { return nil }
        if canCarryInverse(inverse) {
            if relationship.isToMany != inverse.isToMany {
                if !relationship.isToMany { return nil }
            } else if (inverse.entity?.name ?? "", inverse.name) < (relationship.entity?.name ?? "", relationship.name) {
                return nil
            }
        }
        let target = relationship.destinationEntity!
        return "\\\(destination).\(try SwiftNames.propertyName(inverse.name, entity: target.name))"
    }

    private func canCarryInverse(_ relationship: RelationshipDescription) -> Bool {
        guard let owner = relationship.entity, let target = relationship.destinationEntity else { return false }
        return generationOf(owner) == .classDefinition && generationOf(target) == .classDefinition
    }

    /// `Quakes` for `quakes`: what the to-many helpers are named after.
    static func helperSuffix(_ name: String) -> String {
        name.prefix(1).uppercased() + name.dropFirst()
    }

    /// `addToQuakes(_:)` and its companions, as Xcode generates for a to-many relationship.
    private func accessors(for relationship: RelationshipDescription, in typeName: String) throws -> [String] {
        let property = try SwiftNames.propertyName(relationship.name, entity: entity.name)
        let suffix = Self.helperSuffix(relationship.name)
        let destination = try destinationName(of: relationship)
        var lines = ["// Generated accessors for \(relationship.name)", "extension \(typeName) {"]
        if relationship.isOrdered {
            lines += [
                "    \(accessPrefix)func addTo\(suffix)(_ value: \(destination)) { \(property).append(value) }",
                "    \(accessPrefix)func insertInto\(suffix)(_ value: \(destination), at index: Swift.Int) { \(property).insert(value, at: index) }",
                "    \(accessPrefix)func removeFrom\(suffix)(_ value: \(destination)) { \(property).removeAll { $0 === value } }",
                "    \(accessPrefix)func removeFrom\(suffix)(at index: Swift.Int) { \(property).remove(at: index) }",
                "    \(accessPrefix)func addTo\(suffix)(_ values: [\(destination)]) { \(property).append(contentsOf: values) }",
            ]
        } else {
            lines += [
                "    \(accessPrefix)func addTo\(suffix)(_ value: \(destination)) { \(property).insert(value) }",
                "    \(accessPrefix)func removeFrom\(suffix)(_ value: \(destination)) { \(property).remove(value) }",
                "    \(accessPrefix)func addTo\(suffix)(_ values: Swift.Set<\(destination)>) { \(property).formUnion(values) }",
                "    \(accessPrefix)func removeFrom\(suffix)(_ values: Swift.Set<\(destination)>) { \(property).subtract(values) }",
            ]
        }
        lines.append("}")
        return lines
    }
}
