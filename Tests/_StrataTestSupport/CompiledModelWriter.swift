// CompiledModelWriter: writes a model as Xcode compiles it (`.mom`: an NSKeyedArchiver archive
// of NSManagedObjectModel), with the classes and keys real compiled models use: NSEntities,
// NSEntityName, NSSuperentity, NSProperties, NSAttributeType codes, NSIsOptional, NSDefaultValue,
// NSFlagsKey, NSDestinationEntity, NSInverseRelationship, NSMaxCount, NSIsOrdered, NSDeleteRule,
// NSUniqueTuples, NSFetchIndexDescriptions, NSConfigurations, NSVersionIdentifiers. With
// `copiesInherited`, a subentity lists its inherited properties again, as newer compilers do.
//
// Test support only: written from what compiled models hold (surveyed over 131 real ones), not
// from the reader. Never reads.

import Foundation
import StrataGraph

public struct CompiledModelWriter {
    private var plist = BinaryPropertyListWriter()
    /// `$objects`: plist indexes by UID.
    private var objects: [Int] = []
    private var classes: [String: Int] = [:]
    private var strings: [String: Int] = [:]
    public var copiesInherited = false

    public init() {
        objects.append(plist.add(.string("$null")))
    }

    private enum Field {
        case uid(Int)
        case integer(Int64)
        case bool(Bool)
        case real(Double)
    }

    private mutating func reserve() -> Int {
        objects.append(plist.add(.bool(false)))
        return objects.count - 1
    }

    private mutating func key(_ text: String) -> Int {
        if let index = strings["key:" + text] { return index }
        let index = plist.add(.string(text))
        strings["key:" + text] = index
        return index
    }

    private mutating func string(_ text: String) -> Int {
        if let uid = strings[text] { return uid }
        objects.append(plist.add(.string(text)))
        strings[text] = objects.count - 1
        return objects.count - 1
    }

    private mutating func className(_ name: String, _ hierarchy: [String]) -> Int {
        if let uid = classes[name] { return uid }
        let list = plist.add(.array(hierarchy.map { plist.add(.string($0)) }))
        let uid = reserve()
        plist.set(objects[uid], .dictionary([(key("$classname"), plist.add(.string(name))), (key("$classes"), list)]))
        classes[name] = uid
        return uid
    }

    private mutating func fill(_ uid: Int, _ name: String, _ hierarchy: [String], _ fields: [(String, Field)]) {
        let classUID = className(name, hierarchy)
        var pairs: [(key: Int, value: Int)] = []
        for (name, field) in fields + [("$class", .uid(classUID))] {
            let value: Int
            switch field {
            case .uid(let target): value = plist.add(.uid(UInt64(target)))
            case .integer(let v): value = plist.add(.integer(v))
            case .bool(let v): value = plist.add(.bool(v))
            case .real(let v): value = plist.add(.real(v))
            }
            pairs.append((key(name), value))
        }
        plist.set(objects[uid], .dictionary(pairs))
    }

    private mutating func dictionary(_ entries: [(String, Int)], mutable: Bool = true) -> Int {
        let uid = reserve()
        let keys = entries.map { plist.add(.uid(UInt64(string($0.0)))) }
        let values = entries.map { plist.add(.uid(UInt64($0.1))) }
        let name = mutable ? "NSMutableDictionary" : "NSDictionary"
        let classUID = className(name, mutable ? ["NSMutableDictionary", "NSDictionary", "NSObject"] : ["NSDictionary", "NSObject"])
        plist.set(objects[uid], .dictionary([(key("NS.keys"), plist.add(.array(keys))), (key("NS.objects"), plist.add(.array(values))),
                                             (key("$class"), plist.add(.uid(UInt64(classUID))))]))
        return uid
    }

    private mutating func list(_ uids: [Int], className name: String = "NSMutableArray") -> Int {
        let uid = reserve()
        let values = uids.map { plist.add(.uid(UInt64($0))) }
        let classUID = className(name, [name, name.replacingOccurrences(of: "Mutable", with: ""), "NSObject"])
        plist.set(objects[uid], .dictionary([(key("NS.objects"), plist.add(.array(values))), (key("$class"), plist.add(.uid(UInt64(classUID))))]))
        return uid
    }

    /// Core Data's attribute type codes.
    static let codes: [AttributeDescription.AttributeType: Int64] = [
        .integer16: 100, .integer32: 200, .integer64: 300, .decimal: 400, .double: 500, .float: 600, .string: 700,
        .boolean: 800, .date: 900, .binaryData: 1000, .uuid: 1100, .uri: 1200, .transformable: 1800, .objectID: 2000,
    ]

    /// The archive of `model`.
    public mutating func archive(_ model: ManagedObjectModel) -> [UInt8] {
        let root = reserve()
        let entities = model.entities
        var entityUID: [ObjectIdentifier: Int] = [:]
        for entity in entities { entityUID[ObjectIdentifier(entity)] = reserve() }
        var propertyUID: [ObjectIdentifier: Int] = [:]
        for entity in entities { for property in entity.properties { propertyUID[ObjectIdentifier(property)] = reserve() } }
        for entity in entities {
            let uid = entityUID[ObjectIdentifier(entity)]!
            var listed: [(String, Int)] = entity.properties.map { ($0.name, propertyUID[ObjectIdentifier($0)]!) }
            for property in entity.properties { writeProperty(property, uid: propertyUID[ObjectIdentifier(property)]!, owner: uid, entityUID: entityUID, propertyUID: propertyUID) }
            if copiesInherited {
                var ancestor = entity.superentity
                while let current = ancestor {
                    for property in current.properties {
                        let copy = reserve()
                        writeProperty(property, uid: copy, owner: uid, entityUID: entityUID, propertyUID: propertyUID)
                        listed.append((property.name, copy))
                    }
                    ancestor = current.superentity
                }
            }
            let subentities = dictionary(entity.subentities.map { ($0.name, entityUID[ObjectIdentifier($0)]!) })
            let tuples = list(entity.uniquenessConstraints.map { tuple in list(tuple.map { string($0) }) })
            let indexes = list(entity.indexes.map { index in
                let indexUID = reserve()
                let elements = index.elements.map { element -> Int in
                    let elementUID = reserve()
                    fill(elementUID, "NSFetchIndexElementDescription", ["NSFetchIndexElementDescription", "NSObject"], [
                        ("NSPropertyName", .uid(string(element.propertyName))), ("NSAscending", .bool(element.isAscending)),
                        ("NSFetchIndexElementType", .integer(element.collationType == .rTree ? 1 : 0)), ("NSFetchIndexDescription", .uid(indexUID)),
                    ])
                    return elementUID
                }
                fill(indexUID, "NSFetchIndexDescription", ["NSFetchIndexDescription", "NSObject"], [
                    ("NSIndexName", .uid(string(index.name))), ("NSIndexElements", .uid(list(elements))), ("NSEntity", .uid(uid)),
                    ("NSPartialIndexPredicate", .uid(0)),
                ])
                return indexUID
            })
            var fields: [(String, Field)] = [
                ("NSEntityName", .uid(string(entity.name))), ("NSClassNameForEntity", .uid(string(entity.managedObjectClassName))),
                ("NSProperties", .uid(dictionary(listed))), ("NSSubentities", .uid(subentities)),
                ("NSSuperentity", .uid(entity.superentity.map { entityUID[ObjectIdentifier($0)]! } ?? 0)),
                ("NSManagedObjectModel", .uid(root)), ("NSRenamingIdentifier", .uid(string(entity.renamingIdentifier ?? entity.name))),
                ("NSUserInfo", .uid(dictionary([], mutable: false))), ("NSVersionHashModifier", .uid(0)),
                ("NSFetchIndexDescriptions", .uid(indexes)), ("NSCompoundIndexes", .uid(list([]))),
            ]
            if !entity.uniquenessConstraints.isEmpty { fields.append(("NSUniqueTuples", .uid(tuples))) }
            if entity.isAbstract { fields.append(("NSIsAbstract", .bool(true))) }
            fill(uid, "NSEntityDescription", ["NSEntityDescription", "NSObject"], fields)
        }
        let configurations = model.configurations.map { name in
            (name, list((model.entities(forConfigurationName: name) ?? []).map { entityUID[ObjectIdentifier($0)]! }, className: "NSMutableSet"))
        }
        fill(root, "NSManagedObjectModel", ["NSManagedObjectModel", "NSObject"], [
            ("NSEntities", .uid(dictionary(entities.map { ($0.name, entityUID[ObjectIdentifier($0)]!) }))),
            ("NSVersionIdentifiers", .uid(list(model.versionIdentifiers.sorted().map { string($0) }, className: "NSSet"))),
            ("NSFetchRequestTemplates", .uid(0)),
        ] + (configurations.isEmpty ? [] : [("NSConfigurations", .uid(dictionary(configurations)))]))
        let top = plist.add(.dictionary([(key("root"), plist.add(.uid(UInt64(root))))]))
        let objectList = plist.add(.array(objects))
        let archive = plist.add(.dictionary([
            (key("$version"), plist.add(.integer(100_000))), (key("$archiver"), plist.add(.string("NSKeyedArchiver"))),
            (key("$top"), top), (key("$objects"), objectList),
        ]))
        return plist.bytes(top: archive)
    }

    private mutating func writeProperty(_ property: PropertyDescription, uid: Int, owner: Int,
                                        entityUID: [ObjectIdentifier: Int], propertyUID: [ObjectIdentifier: Int]) {
        var fields: [(String, Field)] = [("NSPropertyName", .uid(string(property.name))), ("NSEntity", .uid(owner)),
                                         ("NSRenamingIdentifier", .uid(string(property.renamingIdentifier ?? property.name)))]
        if property.isOptional { fields.append(("NSIsOptional", .bool(true))) }
        if property.isTransient { fields.append(("NSIsTransient", .bool(true))) }
        if let relationship = property as? RelationshipDescription {
            fields += [
                ("NSDestinationEntity", .uid(entityUID[ObjectIdentifier(relationship.destinationEntity!)]!)),
                ("_NSDestinationEntityName", .uid(string(relationship.destinationEntity!.name))),
                ("NSInverseRelationship", .uid(relationship.inverseRelationship.map { propertyUID[ObjectIdentifier($0)]! } ?? 0)),
                ("NSMinCount", .integer(Int64(relationship.minCount))), ("NSMaxCount", .integer(Int64(relationship.maxCount))),
                ("NSDeleteRule", .integer([.noActionDeleteRule: 0, .nullifyDeleteRule: 1, .cascadeDeleteRule: 2, .denyDeleteRule: 3][relationship.deleteRule]!)),
            ]
            if relationship.isOrdered { fields.append(("NSIsOrdered", .bool(true))) }
            fill(uid, "NSRelationshipDescription", ["NSRelationshipDescription", "NSPropertyDescription", "NSObject"], fields)
            return
        }
        let attribute = property as! AttributeDescription
        var flags: Int64 = attribute.preservesValueInHistoryOnDeletion ? 16 : 0
        if attribute.allowsExternalBinaryDataStorage { flags |= 4 }
        fields += [("NSAttributeType", .integer(Self.codes[attribute.attributeType]!)), ("NSFlagsKey", .integer(flags)),
                   ("NSValueTransformerName", .uid(attribute.valueTransformerName.map { string($0) } ?? 0)),
                   ("NSDefaultValue", .uid(defaultValue(attribute.defaultValue)))]
        if let derived = attribute as? DerivedAttributeDescription {
            let expression = reserve(), specifier = reserve()
            fill(specifier, "NSKeyPathSpecifierExpression", ["NSKeyPathSpecifierExpression", "NSExpression", "NSObject"],
                 [("NSKeyPath", .uid(string(derived.derivationExpression))), ("NSExpressionType", .integer(10))])
            fill(expression, "NSKeyPathExpression", ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression", "NSObject"],
                 [("NSArguments", .uid(list([specifier]))), ("NSSelectorName", .uid(string("valueForKeyPath:"))), ("NSExpressionType", .integer(3))])
            fields.append(("NSDerivationExpression", .uid(expression)))
            fill(uid, "NSDerivedAttributeDescription", ["NSDerivedAttributeDescription", "NSAttributeDescription", "NSPropertyDescription", "NSObject"], fields)
            return
        }
        fill(uid, "NSAttributeDescription", ["NSAttributeDescription", "NSPropertyDescription", "NSObject"], fields)
    }

    /// A default value as compiled models hold it: scalars and strings as objects of their own,
    /// dates and decimals and UUIDs as archived objects.
    private mutating func defaultValue(_ value: Any?) -> Int {
        guard let value else { return 0 }
        switch value {
        case let v as Bool: objects.append(plist.add(.bool(v)))
        case let v as Int16: objects.append(plist.add(.integer(Int64(v))))
        case let v as Int32: objects.append(plist.add(.integer(Int64(v))))
        case let v as Int64: objects.append(plist.add(.integer(v)))
        case let v as Int: objects.append(plist.add(.integer(Int64(v))))
        case let v as Double: objects.append(plist.add(.real(v)))
        case let v as Float: objects.append(plist.add(.real(Double(v))))
        case let v as String: return string(v)
        case let v as Date:
            let uid = reserve()
            fill(uid, "NSDate", ["NSDate", "NSObject"], [("NS.time", .real(v.timeIntervalSinceReferenceDate))])
            return uid
        case let v as UUID:
            let uid = reserve()
            let bytes = plist.add(.data(withUnsafeBytes(of: v.uuid) { Array($0) }))
            let classUID = className("NSUUID", ["NSUUID", "NSObject"])
            plist.set(objects[uid], .dictionary([(key("NS.uuidbytes"), bytes), (key("$class"), plist.add(.uid(UInt64(classUID))))]))
            return uid
        case let v as Decimal:
            // NSDecimalNumber: a little-endian mantissa, an exponent and a sign.
            let uid = reserve()
            let exponent = v.exponent
            let mantissa = UInt64(truncating: NSDecimalNumber(decimal: v.significand.magnitude))
            let bytes = plist.add(.data((0..<16).map { $0 < 8 ? UInt8(truncatingIfNeeded: mantissa >> (8 * UInt64($0))) : 0 }))
            let classUID = className("NSDecimalNumberPlaceholder", ["NSDecimalNumberPlaceholder", "NSObject"])
            plist.set(objects[uid], .dictionary([
                (key("NS.mantissa"), bytes), (key("NS.exponent"), plist.add(.integer(Int64(exponent)))),
                (key("NS.negative"), plist.add(.bool(v < 0))), (key("NS.mantissa.bo"), plist.add(.integer(1))),
                (key("NS.length"), plist.add(.integer(mantissa == 0 ? 0 : 4))), (key("NS.compact"), plist.add(.bool(true))),
                (key("$class"), plist.add(.uid(UInt64(classUID)))),
            ]))
            return uid
        case let v as URL: return string(v.absoluteString)
        default: return 0
        }
        return objects.count - 1
    }
}
