// CompiledModelReader: a model from Xcode's compiled form: a `.mom` file (an NSKeyedArchiver
// archive of NSManagedObjectModel), the current version of a `.momd` folder (named by its
// `VersionInfo.plist`), or the archive a Core Data SQLite store keeps in `Z_MODELCACHE`
// (read with StrataSQLiteFormat).
//
// Owns: turning the archived NSEntityDescription, NSAttributeDescription,
// NSRelationshipDescription, NSDerivedAttributeDescription and NSFetchIndexDescription objects
// into Strata's descriptions (entities, inheritance, attributes with their types, optionality,
// defaults and flags, relationships with destinations, inverses, counts, order and delete rules,
// uniqueness constraints, fetch indexes, configurations, version identifiers). What Strata does
// not use (fetched properties, validation predicates, partial-index predicates) is skipped with
// a warning, as the Xcode model reader does. Never reads the archive's bytes itself.

import Foundation
import StrataCore
import StrataSQLiteFormat

enum CompiledModelReader {
    /// Core Data's `NSAttributeType` numbers.
    static let attributeTypes: [Int64: AttributeDescription.AttributeType] = [
        100: .integer16, 200: .integer32, 300: .integer64, 400: .decimal, 500: .double, 600: .float, 700: .string,
        800: .boolean, 900: .date, 1000: .binaryData, 1100: .uuid, 1200: .uri, 1800: .transformable, 2000: .objectID,
    ]

    /// Whether `url` is a compiled model: a `.mom` file, a `.momd` folder, or any file holding a
    /// binary property list (an archive).
    static func isCompiledModel(_ url: URL) -> Bool {
        if url.pathExtension == "momd" || url.pathExtension == "mom" { return true }
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 8)) ?? Data()
        return BinaryPropertyList.isBinaryPropertyList(head)
    }

    /// Whether `url` is a SQLite file (a Core Data store, whose model is in `Z_MODELCACHE`): its
    /// header says so, or it is empty with every page in its `-wal` log (as Core Data leaves
    /// stores it has not checkpointed).
    static func isCoreDataStore(_ url: URL) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 16)) ?? Data()
        if head == Data("SQLite format 3\u{0}".utf8) { return true }
        return head.isEmpty && FileManager.default.fileExists(atPath: url.path + "-wal")
    }

    /// The compiled model a Core Data store keeps in `Z_MODELCACHE`, inflated, and a name for it.
    static func modelCache(ofStoreAt url: URL) throws -> (bytes: [UInt8], file: String) {
        let store = try CoreDataSQLiteFile(SQLiteDatabase(path: url.path))
        guard let archive = try store.modelArchive() else {
            throw StrataError(.modelFile, "\(url.path): the Core Data store carries no model (it has no Z_MODELCACHE); read the model it was written with from its .xcdatamodeld or .momd")
        }
        return (archive, "\(url.path) (Z_MODELCACHE)")
    }

    /// The `.mom` file to read for `url`: itself, or a `.momd` folder's current version.
    static func momFile(for url: URL) throws -> URL {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw StrataError(.modelFile, "\(url.path): no such model file or directory")
        }
        guard isDirectory.boolValue else { return url }
        let info = url.appendingPathComponent("VersionInfo.plist")
        if let data = try? Data(contentsOf: info),
           let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil) as? [String: Any],
           let current = plist["NSManagedObjectModel_CurrentVersionName"] as? String {
            let file = url.appendingPathComponent(current + ".mom")
            guard FileManager.default.fileExists(atPath: file.path) else {
                throw StrataError(.modelFile, "\(info.path): the current version \(current) has no \(current).mom in \(url.path)")
            }
            return file
        }
        let moms = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).filter { $0.hasSuffix(".mom") }.sorted()
        guard moms.count == 1 else {
            throw StrataError(.modelFile, "\(url.path): a compiled model folder without VersionInfo.plist must hold one .mom (it holds \(moms.count))")
        }
        return url.appendingPathComponent(moms[0])
    }

    /// The entities, configurations, version identifiers and warnings of the archived model.
    static func read(_ bytes: [UInt8], file: String) throws -> (entities: [EntityDescription], configurations: [(String, [String])],
                                                                 versionIdentifiers: Set<String>, warnings: [String]) {
        let archive = try KeyedArchive(bytes, file: file)
        var reader = Reader(archive: archive, file: file)
        return try reader.read()
    }

    private struct Reader {
        let archive: KeyedArchive
        let file: String
        var warnings: [String] = []
        var entities: [Int: EntityDescription] = [:]
        var order: [Int] = []

        init(archive: KeyedArchive, file: String) {
            self.archive = archive
            self.file = file
        }

        func fail(_ problem: String) -> StrataError { StrataError(.modelFile, "\(file): \(problem)") }

        mutating func read() throws -> (entities: [EntityDescription], configurations: [(String, [String])],
                                        versionIdentifiers: Set<String>, warnings: [String]) {
            guard let model = try archive.object(archive.root), model.className.hasSuffix("ManagedObjectModel") else {
                throw fail("the archive's root is not a managed object model")
            }
            let entityUIDs = try archive.entries(model["NSEntities"]).map(\.value)
            var objects: [Int: KeyedArchive.Object] = [:]
            for uid in entityUIDs {
                guard let object = try archive.object(uid), object.className == "NSEntityDescription" else {
                    throw fail("NSEntities holds an object that is not an entity (UID \(uid))")
                }
                let entity = EntityDescription()
                guard let name = try archive.string(object["NSEntityName"]), !name.isEmpty else { throw fail("an entity has no name (UID \(uid))") }
                entity.name = name
                if let className = try archive.string(object["NSClassNameForEntity"]), !className.isEmpty, className != "NSManagedObject" {
                    entity.managedObjectClassName = className
                }
                entity.isAbstract = archive.bool(object["NSIsAbstract"])
                entity.renamingIdentifier = try archive.string(object["NSRenamingIdentifier"]).flatMap { $0 == name ? nil : $0 }
                entities[uid] = entity
                objects[uid] = object
                order.append(uid)
            }
            order.sort { entities[$0]!.name < entities[$1]!.name }
            for uid in order {
                let object = objects[uid]!
                if let parent = archive.uid(object["NSSuperentity"]) {
                    guard let superentity = entities[parent] else { throw fail("entity \(entities[uid]!.name)'s superentity is not an entity of the model") }
                    var chain: Set<ObjectIdentifier> = [ObjectIdentifier(entities[uid]!)]
                    var next: EntityDescription? = superentity
                    while let current = next {
                        guard chain.insert(ObjectIdentifier(current)).inserted else {
                            throw fail("entity \(entities[uid]!.name) inherits from itself")
                        }
                        next = current.superentity
                    }
                    entities[uid]!.superentity = superentity
                }
            }
            var pendingInverses: [(RelationshipDescription, Int, String)] = []
            var relationshipsByUID: [Int: RelationshipDescription] = [:]
            var declared: [Int: [(uid: Int, property: PropertyDescription)]] = [:]
            for uid in order {
                let entity = entities[uid]!, object = objects[uid]!
                var properties: [(uid: Int, property: PropertyDescription)] = []
                for (_, propertyUID) in try archive.entries(object["NSProperties"]).sorted(by: { $0.value < $1.value }) {
                    guard let property = try archive.object(propertyUID) else { continue }
                    switch property.className {
                    case "NSAttributeDescription", "NSDerivedAttributeDescription":
                        properties.append((propertyUID, try attribute(property, of: entity)))
                    case "NSRelationshipDescription":
                        let (relationship, inverse) = try self.relationship(property, of: entity)
                        relationshipsByUID[propertyUID] = relationship
                        if let inverse { pendingInverses.append((relationship, inverse, entity.name)) }
                        properties.append((propertyUID, relationship))
                    case "NSFetchedPropertyDescription":
                        warnings.append("\(file): entity \(entity.name): fetched property \(try archive.string(property["NSPropertyName"]) ?? "?") was skipped (compiled fetched properties are not read)")
                    case "_NSPropertyDescriptionProxy":
                        continue   // an inherited property, listed again in a subentity
                    default:
                        warnings.append("\(file): entity \(entity.name): a property of class \(property.className) was skipped")
                    }
                }
                declared[uid] = properties
            }
            // A subentity lists its inherited properties again (copies naming the subentity):
            // each entity keeps the properties no ancestor declares, and a copy stands for the
            // ancestor's property wherever an inverse names it.
            for uid in order {
                let entity = entities[uid]!
                var inherited: [String: PropertyDescription] = [:]
                var ancestor = entity.superentity
                var visited: Set<ObjectIdentifier> = [ObjectIdentifier(entity)]
                while let current = ancestor, visited.insert(ObjectIdentifier(current)).inserted,
                      let ancestorUID = entities.first(where: { $0.value === current })?.key {
                    for (_, property) in declared[ancestorUID] ?? [] where inherited[property.name] == nil { inherited[property.name] = property }
                    ancestor = current.superentity
                }
                var own: [PropertyDescription] = []
                for (propertyUID, property) in declared[uid] ?? [] {
                    if let original = inherited[property.name] {
                        if let relationship = original as? RelationshipDescription { relationshipsByUID[propertyUID] = relationship }
                        pendingInverses.removeAll { $0.0 === property }
                        continue
                    }
                    own.append(property)
                }
                own.sort { $0.name < $1.name }
                entity.properties = own
                entity.uniquenessConstraints = try uniquenessConstraints(objects[uid]!, of: entity)
                entity.indexes = try fetchIndexes(objects[uid]!, of: entity)
            }
            for (relationship, inverseUID, owner) in pendingInverses {
                guard let inverse = relationshipsByUID[inverseUID] else {
                    throw fail("relationship \(owner).\(relationship.name)'s inverse is not a relationship of the model")
                }
                relationship.inverseRelationship = inverse
            }
            var configurations: [(String, [String])] = []
            for (key, value) in try archive.entries(model["NSConfigurations"]) {
                guard let name = try archive.string(.uid(UInt64(key))) else { continue }
                var members: [String] = []
                let listed = try archive.object(value).map { $0.fields["NS.keys"] != nil ? try archive.entries(.uid(UInt64(value))).map(\.value) : try archive.members(.uid(UInt64(value))) } ?? []
                for member in listed {
                    if let entity = entities[member] { members.append(entity.name) } else if let text = try archive.string(.uid(UInt64(member))) { members.append(text) }
                }
                configurations.append((name, members.sorted()))
            }
            var identifiers: Set<String> = []
            for uid in try archive.members(model["NSVersionIdentifiers"]) {
                if let text = try archive.string(.uid(UInt64(uid))), !text.isEmpty { identifiers.insert(text) }
            }
            return (order.map { entities[$0]! }, configurations.sorted { $0.0 < $1.0 }, identifiers, warnings)
        }

        mutating func attribute(_ object: KeyedArchive.Object, of entity: EntityDescription) throws -> AttributeDescription {
            guard let name = try archive.string(object["NSPropertyName"]), !name.isEmpty else { throw fail("entity \(entity.name) has an attribute without a name") }
            let place = "entity \(entity.name), attribute \(name)"
            let code = archive.integer(object["NSAttributeType"]) ?? 0
            let isTransient = archive.bool(object["NSIsTransient"])
            guard let type = Self.type(code, transient: isTransient) else {
                throw fail("\(place): attribute type \(code) is not one Strata reads (Core Data's composite attributes are not supported)")
            }
            let attribute: AttributeDescription
            if object.className == "NSDerivedAttributeDescription" {
                let expression = try derivation(object["NSDerivationExpression"])
                guard let expression else { throw fail("\(place): a derived attribute whose derivation Strata cannot read") }
                attribute = DerivedAttributeDescription(name: name, type: type, derivationExpression: expression)
            } else {
                attribute = AttributeDescription(name: name, type: type)
            }
            attribute.isOptional = archive.bool(object["NSIsOptional"])
            attribute.isTransient = isTransient
            attribute.renamingIdentifier = try archive.string(object["NSRenamingIdentifier"]).flatMap { $0 == name ? nil : $0 }
            attribute.valueTransformerName = try archive.string(object["NSValueTransformerName"])
            if type == .transformable { attribute.attributeValueClassName = try archive.string(object["NSAttributeValueClassName"]) }
            let flags = archive.integer(object["NSFlagsKey"]) ?? 0
            attribute.allowsExternalBinaryDataStorage = type == .binaryData && flags & 4 != 0
            attribute.preservesValueInHistoryOnDeletion = flags & 16 != 0
            attribute.defaultValue = try defaultValue(object["NSDefaultValue"], type: type, place: place)
            if archive.bool(object["NSIsIndexed"]) && !isTransient && !(attribute is DerivedAttributeDescription) {
                entity.indexes.append(FetchIndexDescription(name: "\(name)Index", elements: [
                    FetchIndexElementDescription(propertyName: name, collationType: .binary, ascending: true),
                ]))
            }
            if object["NSValidationPredicates"] != nil, !(try archive.members(object["NSValidationPredicates"])).isEmpty {
                warnings.append("\(file): \(place): validation predicates were skipped")
            }
            return attribute
        }

        static func type(_ code: Int64, transient: Bool) -> AttributeDescription.AttributeType? {
            if code == 0 && transient { return .transformable }   // "Undefined", transient only
            return attributeTypes[code]
        }

        mutating func relationship(_ object: KeyedArchive.Object, of entity: EntityDescription) throws -> (RelationshipDescription, Int?) {
            guard let name = try archive.string(object["NSPropertyName"]), !name.isEmpty else { throw fail("entity \(entity.name) has a relationship without a name") }
            guard let destinationUID = archive.uid(object["NSDestinationEntity"]), let destination = entities[destinationUID] else {
                throw fail("relationship \(entity.name).\(name) has no destination entity in the model")
            }
            let relationship = RelationshipDescription(name: name, destination: destination)
            let maxCount = archive.integer(object["NSMaxCount"]) ?? 1
            relationship.maxCount = maxCount == 1 ? 1 : max(0, Int(clamping: maxCount))
            relationship.minCount = max(0, Int(clamping: archive.integer(object["NSMinCount"]) ?? 0))
            relationship.isOrdered = relationship.isToMany && archive.bool(object["NSIsOrdered"])
            relationship.isOptional = archive.bool(object["NSIsOptional"])
            relationship.isTransient = archive.bool(object["NSIsTransient"])
            relationship.renamingIdentifier = try archive.string(object["NSRenamingIdentifier"]).flatMap { $0 == name ? nil : $0 }
            switch archive.integer(object["NSDeleteRule"]) ?? 1 {
            case 0: relationship.deleteRule = .noActionDeleteRule
            case 1: relationship.deleteRule = .nullifyDeleteRule
            case 2: relationship.deleteRule = .cascadeDeleteRule
            case 3: relationship.deleteRule = .denyDeleteRule
            case let rule: throw fail("relationship \(entity.name).\(name) has delete rule \(rule), which is not one of Core Data's")
            }
            return (relationship, archive.uid(object["NSInverseRelationship"]))
        }

        /// A default value of `type` from the archive (inline scalars, strings, NSDate,
        /// NSDecimalNumber, NSUUID).
        mutating func defaultValue(_ value: KeyedArchive.Value?, type: AttributeDescription.AttributeType, place: String) throws -> Any? {
            guard let value, archive.uid(value) != nil || !(value == .uid(0)) else { return nil }
            if let object = try archive.object(value) {
                switch object.className {
                case "NSDate":
                    guard case .real(let seconds)? = object["NS.time"] ?? .real(0) else { return nil }
                    return type == .date ? Date(timeIntervalSinceReferenceDate: seconds) : nil
                case "NSDecimalNumberPlaceholder", "NSDecimalNumber":
                    guard case .data(let mantissa)? = object["NS.mantissa"] else { return nil }
                    var magnitude: UInt64 = 0
                    for byte in mantissa.prefix(8).reversed() { magnitude = magnitude << 8 | UInt64(byte) }
                    var decimal = Decimal(magnitude)
                    let exponent = Int(archive.integer(object["NS.exponent"]) ?? 0)
                    if exponent != 0 { decimal = Decimal(sign: .plus, exponent: exponent, significand: decimal) }
                    if archive.bool(object["NS.negative"]) { decimal = -decimal }
                    return convert(decimal: decimal, to: type, place: place)
                case "NSUUID":
                    guard case .data(let bytes)? = object["NS.uuidbytes"], bytes.count == 16, type == .uuid else { return nil }
                    return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                       bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
                case "NSURL":
                    return try archive.string(object["NS.relative"]).flatMap(URL.init(string:))
                case "NSString", "NSMutableString":
                    return try archive.string(value).flatMap { text(default: $0, type: type, place: place) }
                default:
                    warnings.append("\(file): \(place): a default value of class \(object.className) was skipped")
                    return nil
                }
            }
            switch try archive.scalar(value) {
            case .integer(let v)?:
                switch type {
                case .boolean: return v != 0
                case .date: return Date(timeIntervalSinceReferenceDate: Double(v))
                default: return convert(integer: v, to: type)
                }
            case .real(let v)?:
                switch type {
                case .double: return v
                case .float: return Float(v)
                case .decimal: return Decimal(string: "\(v)")
                case .integer16, .integer32, .integer64: return v.rounded() == v ? Int64(exactly: v).flatMap { convert(integer: $0, to: type) } : nil
                case .boolean: return v != 0
                case .date: return Date(timeIntervalSinceReferenceDate: v)
                default: return nil
                }
            case .bool(let v)?: return type == .boolean ? v : (type.isNumeric ? convert(integer: v ? 1 : 0, to: type) : nil)
            case .string(let v)?: return text(default: v, type: type, place: place)
            case .date(let v)?: return type == .date ? Date(timeIntervalSinceReferenceDate: v) : nil
            default: return nil
            }
        }

        private func convert(integer v: Int64, to type: AttributeDescription.AttributeType) -> Any? {
            switch type {
            case .integer16: return Int16(exactly: v)
            case .integer32: return Int32(exactly: v)
            case .integer64: return v
            case .double: return Double(v)
            case .float: return Float(v)
            case .decimal: return Decimal(v)
            default: return nil
            }
        }

        private mutating func convert(decimal: Decimal, to type: AttributeDescription.AttributeType, place: String) -> Any? {
            switch type {
            case .decimal: return decimal
            case .double: return NSDecimalNumber(decimal: decimal).doubleValue
            case .float: return NSDecimalNumber(decimal: decimal).floatValue
            case .integer16, .integer32, .integer64: return convert(integer: NSDecimalNumber(decimal: decimal).int64Value, to: type)
            default:
                warnings.append("\(file): \(place): a decimal default value for a \(type) attribute was skipped")
                return nil
            }
        }

        private mutating func text(default text: String, type: AttributeDescription.AttributeType, place: String) -> Any? {
            switch type {
            case .string: return text
            case .uuid: return UUID(uuidString: text)
            case .uri: return URL(string: text)
            default:
                warnings.append("\(file): \(place): the text default value \"\(text)\" of a \(type) attribute was skipped")
                return nil
            }
        }

        /// A derivation expression as the Xcode model spells it (`posts.@count`, `now()`,
        /// `lowercase:(name)`), from an archived NSExpression.
        func derivation(_ value: KeyedArchive.Value?) throws -> String? {
            guard let expression = try archive.object(value) else { return nil }
            switch expression.className {
            case "NSKeyPathExpression":
                let arguments = try archive.members(expression["NSArguments"])
                for argument in arguments {
                    if let specifier = try archive.object(argument), let path = try archive.string(specifier["NSKeyPath"]) { return path }
                    if let path = try archive.string(.uid(UInt64(argument))) { return path }
                }
                return nil
            case "NSFunctionExpression":
                guard let selector = try archive.string(expression["NSSelectorName"]) else { return nil }
                let arguments = try archive.members(expression["NSArguments"]).compactMap { try derivation(.uid(UInt64($0))) }
                if selector == "now" { return "now()" }
                // Aggregates are key-path operators in the Xcode model's spelling.
                let aggregates = ["count:": "@count", "sum:": "@sum", "min:": "@min", "max:": "@max", "average:": "@avg"]
                if let op = aggregates[selector], arguments.count == 1 {
                    let parts = arguments[0].split(separator: ".", maxSplits: 1).map(String.init)
                    return parts.count == 1 ? "\(parts[0]).\(op)" : "\(parts[0]).\(op).\(parts[1])"
                }
                guard selector.hasSuffix(":"), arguments.count == 1 else { return nil }
                return "\(selector)(\(arguments[0]))"
            case "NSKeyPathSpecifierExpression":
                return try archive.string(expression["NSKeyPath"])
            default:
                return nil
            }
        }

        func uniquenessConstraints(_ object: KeyedArchive.Object, of entity: EntityDescription) throws -> [[String]] {
            try archive.members(object["NSUniqueTuples"]).map { tuple in
                try archive.members(.uid(UInt64(tuple))).compactMap { element in
                    if let name = try archive.string(.uid(UInt64(element))) { return name }
                    return try archive.object(element).flatMap { try archive.string($0["NSPropertyName"]) }
                }
            }.filter { !$0.isEmpty }
        }

        mutating func fetchIndexes(_ object: KeyedArchive.Object, of entity: EntityDescription) throws -> [FetchIndexDescription] {
            var indexes = entity.indexes
            for uid in try archive.members(object["NSFetchIndexDescriptions"]) {
                guard let index = try archive.object(uid), let name = try archive.string(index["NSIndexName"]) else { continue }
                if archive.uid(index["NSPartialIndexPredicate"]) != nil {
                    warnings.append("\(file): entity \(entity.name): fetch index \(name)'s partial-index predicate was skipped (the index covers every row)")
                }
                var elements: [FetchIndexElementDescription] = []
                for elementUID in try archive.members(index["NSIndexElements"]) {
                    guard let element = try archive.object(elementUID) else { continue }
                    guard let property = try archive.string(element["NSPropertyName"]), element["NSIndexedProperty"] == nil || archive.uid(element["NSIndexedProperty"]) == nil else {
                        warnings.append("\(file): entity \(entity.name): fetch index \(name): an expression element was skipped")
                        continue
                    }
                    let collation: FetchIndexElementDescription.CollationType = archive.integer(element["NSFetchIndexElementType"]) == 1 ? .rTree : .binary
                    elements.append(FetchIndexElementDescription(propertyName: property, collationType: collation,
                                                                 ascending: element["NSAscending"].map { archive.bool($0) } ?? true))
                }
                if !elements.isEmpty, !indexes.contains(where: { $0.name == name }) {
                    indexes.append(FetchIndexDescription(name: name, elements: elements))
                }
            }
            return indexes
        }
    }
}

extension ManagedObjectModel {
    /// A model read from a compiled model's bytes (an NSKeyedArchiver archive of a managed
    /// object model: a `.mom` file's contents, or a Core Data store's `Z_MODELCACHE` inflated);
    /// `file` names them in errors and warnings.
    public convenience init(compiledModel bytes: [UInt8], file: String) throws {
        let contents = try CompiledModelReader.read(bytes, file: file)
        self.init(entities: contents.entities)
        warnings = contents.warnings
        versionIdentifiers = contents.versionIdentifiers
        for (name, members) in contents.configurations {
            let byName = entitiesByName
            setEntities(members.compactMap { byName[$0] }, forConfigurationName: name)
        }
        try validate()
        bindClassesFoundByName()
    }
}
