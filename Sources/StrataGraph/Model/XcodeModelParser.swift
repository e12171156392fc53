// XcodeModelParser: turns the XML of an Xcode model's `contents` file into model descriptions.
//
// Owns: the mapping from Xcode's model XML (<entity>, <attribute>, <relationship>, constraints,
// fetch indexes, configurations, user info) to EntityDescription, AttributeDescription,
// DerivedAttributeDescription, RelationshipDescription and FetchIndexDescription, and the
// conversion of the file's text values (defaults, limits, counts) to Swift values.
// Invariant: a problem in the file (malformed XML, unknown attribute type, unparsable default,
// unknown parent entity) throws a StrataError(.modelFile) naming the path and line (and column
// for XML syntax errors); an element it does not understand is skipped whole and reported as one
// warning naming the element and line. It never reads the file system (XcodeModelReader does),
// never looks up classes, and never resolves destinations or inverses: relationships carry
// names that ModelValidation resolves.

#if canImport(FoundationXML)
import FoundationXML
#endif
import Foundation
import StrataCore

/// What a model file holds, before it becomes a ManagedObjectModel.
struct XcodeModelContents {
    /// Entities in file order, superentities wired.
    var entities: [EntityDescription] = []
    /// Configurations in file order; every member name is an entity of `entities`.
    var configurations: [(name: String, entityNames: [String])] = []
    /// `userDefinedModelVersionIdentifier` of the `<model>` element.
    var versionIdentifier: String?
    /// One line per skipped element or ignored value, naming the path and line.
    var warnings: [String] = []
}

/// The XMLParser delegate that builds descriptions from an Xcode model's XML.
///
/// Use ``parse(_:path:)``; an instance reads one document once.
final class XcodeModelParser: NSObject, XMLParserDelegate {
    private typealias Attributes = [String: String]

    /// Parses `data` (the text of a `contents` file); `path` names the file in messages.
    static func parse(_ data: Data, path: String) throws -> XcodeModelContents {
        try XcodeModelBytes.check(data, path: path)
        let delegate = XcodeModelParser(path: path)
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        parser.delegate = delegate
        let succeeded = parser.parse()
        // swift-corelibs-foundation's parse() may return true after reporting an error, and
        // reports nothing for a document that stops inside an element: check both here.
        if let failure = delegate.failure { throw failure }
        guard succeeded else {
            throw delegate.syntaxError(parser.parserError, line: parser.lineNumber, column: parser.columnNumber)
        }
        guard delegate.sawModel else {
            throw StrataError(.modelFile, "\(path): the file has no <model> element; it is not a Core Data model")
        }
        if let open = delegate.stack.last {
            throw StrataError(.modelFile, delegate.at(delegate.lastLine, "the file ends before <\(open)> is closed (is it truncated?)"))
        }
        try delegate.finish()
        return delegate.result
    }

    private let path: String
    private var result = XcodeModelContents()
    /// The first error; once set, every further callback is ignored.
    private var failure: StrataError?
    private var sawModel = false
    /// The line of the last tag read, for errors found after parsing.
    private var lastLine = 0

    /// Names of the open elements being read (skipped elements are not pushed).
    private var stack: [String] = []
    /// How many levels of a skipped element are open (0: not skipping).
    private var skipDepth = 0

    private var entity: EntityDescription?
    private var entityProperties: [PropertyDescription] = []
    private var property: PropertyDescription?
    /// Names collected by a <uniquenessConstraint> or <compoundIndex>.
    private var names: [String] = []
    private var fetchIndex: FetchIndexDescription?
    private var configuration: (name: String, entityNames: [String])?
    /// Entities with a `parentEntity`, wired by `finish()`.
    private var parents: [(entity: EntityDescription, parentName: String, line: Int)] = []
    /// Configuration members with the line that named them, checked by `finish()`.
    private var members: [(configuration: String, entityName: String, line: Int)] = []

    private init(path: String) {
        self.path = path
    }

    // MARK: XMLParserDelegate

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        guard failure == nil else { return }
        let line = parser.lineNumber
        lastLine = line
        if skipDepth > 0 { skipDepth += 1; return }
        do {
            try start(elementName, attributeDict, line: line)
        } catch {
            fail(parser, error as? StrataError ?? StrataError(.modelFile, at(line, "\(error)")))
            return
        }
        if skipDepth == 0 { stack.append(elementName) }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?) {
        guard failure == nil else { return }
        lastLine = parser.lineNumber
        if skipDepth > 0 { skipDepth -= 1; return }
        guard let name = stack.popLast() else { return }
        end(name, line: lastLine)
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard failure == nil else { return }
        failure = syntaxError(parseError, line: parser.lineNumber, column: parser.columnNumber)
    }

    func parser(_ parser: XMLParser, validationErrorOccurred validationError: any Error) {
        guard failure == nil else { return }
        failure = syntaxError(validationError, line: parser.lineNumber, column: parser.columnNumber)
    }

    private func fail(_ parser: XMLParser, _ error: StrataError) {
        failure = error
        parser.abortParsing()
    }

    private func syntaxError(_ error: (any Error)?, line: Int, column: Int) -> StrataError {
        var reason = "malformed XML" + (stack.last.map { " inside <\($0)>" } ?? "")
        if let code = (error as NSError?)?.code {
            // The codes are libxml2's (xmlParserErrors), which NSXMLParser reports unchanged.
            // Named here because swift-corelibs-foundation prints XMLParser.ErrorCode cases under
            // the wrong names.
            reason += " (error \(code)" + (Self.syntaxErrorNames[code].map { ": \($0)" } ?? "") + ")"
        }
        return StrataError(.modelFile, "\(path), line \(line), column \(column): \(reason)")
    }

    /// Descriptions of the libxml2 parser error codes a hand-edited model file most often meets.
    private static let syntaxErrorNames: [Int: String] = [
        4: "the document is empty", 5: "the document ends early, or has extra content after its end",
        9: "invalid character", 23: "entity reference without ';'", 26: "undeclared entity",
        39: "attribute value not in quotes", 41: "attribute without a value", 42: "attribute given twice",
        73: "'>' expected", 76: "closing tag does not match the open element", 77: "unfinished tag",
    ]

    // MARK: Elements

    /// Reads one opening tag: `stack.last` is the element it is in.
    private func start(_ name: String, _ attributes: Attributes, line: Int) throws {
        switch (stack.last ?? "", name) {
        case ("", "model"):
            sawModel = true
            result.versionIdentifier = attributes["userDefinedModelVersionIdentifier"]
        case ("", _):
            throw StrataError(.modelFile, at(line, "the root element is <\(name)>, not <model>; this is not a Core Data model file"))
        case ("model", "entity"):
            try startEntity(attributes, line: line)
        case ("model", "configuration"):
            configuration = (try required("name", of: name, attributes, line: line), [])
        case ("configuration", "memberEntity"):
            let member = try required("name", of: name, attributes, line: line)
            configuration?.entityNames.append(member)
            members.append((configuration?.name ?? "", member, line))
        case ("model", "elements"):
            skipDepth = 1   // Xcode's diagram layout: no meaning for the model.
        case ("model", "fetchRequest"):
            skip(name, attributes, line: line, because: "fetch request templates are not supported")
        case ("entity", "attribute"):
            property = try makeAttribute(attributes, line: line)
        case ("entity", "relationship"):
            property = try makeRelationship(attributes, line: line)
        case ("entity", "fetchedProperty"):
            let fetched = FetchedPropertyDescription(name: try required("name", of: name, attributes, line: line), fetchRequest: nil)
            fetched.isOptional = attributes["optional"].map(flag) ?? true
            property = fetched
        case ("fetchedProperty", "fetchRequest"):
            try addFetchedPropertyRequest(attributes, line: line)
        case ("entity", "uniquenessConstraints"), ("entity", "compoundIndexes"),
             ("entity", "userInfo"), ("attribute", "userInfo"), ("relationship", "userInfo"):
            break
        case ("uniquenessConstraints", "uniquenessConstraint"), ("compoundIndexes", "compoundIndex"):
            names = []
        case ("uniquenessConstraint", "constraint"):
            names.append(try required("value", of: name, attributes, line: line))
        case ("compoundIndex", "index"):
            names.append(try required("value", of: name, attributes, line: line))
        case ("entity", "fetchIndex"):
            fetchIndex = FetchIndexDescription(name: try required("name", of: name, attributes, line: line), elements: [])
        case ("fetchIndex", "fetchIndexElement"):
            addFetchIndexElement(attributes, line: line)
        case ("userInfo", "entry"):
            try addUserInfoEntry(attributes, line: line)
        default:
            let place = stack.last.map { " inside <\($0)>" } ?? ""
            skip(name, attributes, line: line, because: "Strata does not know this element\(place)")
        }
    }

    /// Reads one closing tag and completes what its opening tag began.
    private func end(_ name: String, line: Int) {
        guard let entity else {
            if name == "configuration", let configuration {
                result.configurations.append(configuration)
                self.configuration = nil
            }
            return
        }
        switch name {
        case "attribute", "relationship":
            if let property { entityProperties.append(property) }
            property = nil
        case "fetchedProperty":
            if let fetched = property as? FetchedPropertyDescription {
                if fetched.fetchRequest == nil {
                    warn(line, "entity \(entity.name): fetched property \(fetched.name) has no <fetchRequest> and was ignored")
                } else {
                    entityProperties.append(fetched)
                }
            }
            property = nil
        case "uniquenessConstraint":
            if names.isEmpty { warn(line, "entity \(entity.name): an empty <uniquenessConstraint> was ignored") }
            else { entity.uniquenessConstraints.append(names) }
        case "compoundIndex":
            addCompoundIndex(to: entity, line: line)
        case "fetchIndex":
            if let fetchIndex {
                if fetchIndex.elements.isEmpty {
                    warn(line, "entity \(entity.name): fetch index \(fetchIndex.name) has no property elements and was ignored")
                } else {
                    // An explicit index replaces an `indexed="YES"` one of the same name.
                    entity.indexes.removeAll { $0.name == fetchIndex.name }
                    entity.indexes.append(fetchIndex)
                }
            }
            fetchIndex = nil
        case "entity":
            entity.properties = entityProperties
            result.entities.append(entity)
            self.entity = nil
            entityProperties = []
        default:
            break
        }
    }

    /// A fetched property's request: its entity and predicate (`predicateString`). A predicate
    /// that does not parse drops the property, with a warning.
    private func addFetchedPropertyRequest(_ attributes: Attributes, line: Int) throws {
        guard let fetched = property as? FetchedPropertyDescription else { return }
        let place = "entity \(entity?.name ?? "?"), fetched property \(fetched.name)"
        let request = FetchRequest<ManagedObject>(entityName: try required("entity", of: "fetchRequest", attributes, line: line))
        if let format = nonEmpty(attributes["predicateString"]) {
            do {
                request.predicate = try FetchPredicate(format: format)
            } catch {
                warn(line, "\(place): the predicate \"\(format)\" does not parse (\(error)); the property was ignored")
                return
            }
        }
        fetched.fetchRequest = request
    }

    /// Skips the element and everything in it, with one warning.
    private func skip(_ element: String, _ attributes: Attributes, line: Int, because reason: String) {
        let label = attributes["name"].map { "<\(element) name=\"\($0)\">" } ?? "<\(element)>"
        let owner = entity.map { " in entity \($0.name)" } ?? ""
        warn(line, "ignored \(label)\(owner): \(reason)")
        skipDepth = 1
    }

    /// Wires superentities and checks configuration members, once every entity is read.
    private func finish() throws {
        var byName: [String: EntityDescription] = [:]
        for entity in result.entities where byName[entity.name] == nil { byName[entity.name] = entity }
        for (entity, parentName, line) in parents {
            guard let parent = byName[parentName] else {
                throw StrataError(.modelFile, at(line, "entity \(entity.name): parentEntity \(parentName) is not an entity of the model"))
            }
            entity.superentity = parent
        }
        for (configuration, entityName, line) in members where byName[entityName] == nil {
            throw StrataError(.modelFile, at(line, "configuration \(configuration): member entity \(entityName) is not an entity of the model"))
        }
    }

    // MARK: Entities and properties

    private func startEntity(_ attributes: Attributes, line: Int) throws {
        let entity = EntityDescription()
        entity.name = try required("name", of: "entity", attributes, line: line)
        if let className = nonEmpty(attributes["representedClassName"]) { entity.managedObjectClassName = className }
        entity.isAbstract = flag(attributes["isAbstract"])
        entity.codeGenerationType = nonEmpty(attributes["codeGenerationType"])
        entity.renamingIdentifier = nonEmpty(attributes["renamingIdentifier"] ?? attributes["elementID"])
        if let parentName = nonEmpty(attributes["parentEntity"]) { parents.append((entity, parentName, line)) }
        self.entity = entity
        entityProperties = []
    }

    private func makeAttribute(_ attributes: Attributes, line: Int) throws -> AttributeDescription {
        let name = try required("name", of: "attribute", attributes, line: line)
        let place = "entity \(entity?.name ?? "?"), attribute \(name)"
        let typeName = attributes["attributeType"] ?? "Undefined"
        let isTransient = flag(attributes["transient"])
        guard let type = Self.attributeTypes[typeName] ?? (typeName == "Undefined" ? .transformable : nil) else {
            throw StrataError(.modelFile, at(line, "\(place): unknown attributeType \"\(typeName)\""))
        }
        if typeName == "Undefined" && !isTransient {
            throw StrataError(.modelFile, at(line, "\(place): attributeType Undefined is only allowed for transient attributes"))
        }
        let attribute: AttributeDescription
        if flag(attributes["derived"]) {
            guard let expression = nonEmpty(attributes["derivationExpression"]) else {
                throw StrataError(.modelFile, at(line, "\(place): derived attribute without a derivationExpression"))
            }
            attribute = DerivedAttributeDescription(name: name, type: type, derivationExpression: expression)
        } else {
            attribute = AttributeDescription(name: name, type: type)
        }
        attribute.isOptional = flag(attributes["optional"])
        attribute.isTransient = isTransient
        attribute.renamingIdentifier = nonEmpty(attributes["renamingIdentifier"] ?? attributes["elementID"])
        attribute.valueTransformerName = nonEmpty(attributes["valueTransformerName"])
        attribute.attributeValueClassName = nonEmpty(attributes["customClassName"])
        attribute.allowsExternalBinaryDataStorage = flag(attributes["allowsExternalBinaryDataStorage"])
        attribute.usesScalarValueType = attributes["usesScalarValueType"].flatMap(Self.boolean)
        attribute.preservesValueInHistoryOnDeletion = flag(attributes["preserveAfterDeletion"])
        attribute.isIndexedBySpotlight = flag(attributes["spotlightIndexingEnabled"])
        attribute.regularExpression = nonEmpty(attributes["regularExpressionString"])
        let defaultText = type == .date ? attributes["defaultDateTimeInterval"] ?? attributes["defaultValueString"]
            : attributes["defaultValueString"]
        if let defaultText {
            attribute.defaultValue = try defaultValue(defaultText, type: type, place: place, line: line)
        }
        try applyLimits(attributes, to: attribute, place: place, line: line)
        if flag(attributes["indexed"]) && !isTransient && !(attribute is DerivedAttributeDescription) {
            // Xcode's older per-attribute "Indexed" checkbox: a one-property fetch index.
            entity?.indexes.append(FetchIndexDescription(name: "\(name)Index", elements: [
                FetchIndexElementDescription(propertyName: name, collationType: .binary, ascending: true),
            ]))
        }
        return attribute
    }

    private func makeRelationship(_ attributes: Attributes, line: Int) throws -> RelationshipDescription {
        let name = try required("name", of: "relationship", attributes, line: line)
        let place = "entity \(entity?.name ?? "?"), relationship \(name)"
        let destination = try required("destinationEntity", of: "relationship", attributes, line: line)
        let toMany = flag(attributes["toMany"])
        let relationship = RelationshipDescription(name: name, destinationName: destination,
                                                   inverseName: nonEmpty(attributes["inverseName"]), toMany: toMany)
        let maxCount = try count(attributes["maxCount"], "maxCount", place: place, line: line)
        let minCount = try count(attributes["minCount"], "minCount", place: place, line: line)
        if toMany {
            if maxCount == 1 {
                warn(line, "\(place): a to-many relationship with maxCount 1 is read as unbounded (Strata treats maxCount 1 as to-one)")
            }
            relationship.maxCount = maxCount == 1 ? 0 : maxCount ?? 0
        } else {
            relationship.maxCount = 1
        }
        relationship.minCount = minCount ?? 0
        relationship.isOrdered = toMany && flag(attributes["ordered"])
        relationship.isIndexedBySpotlight = flag(attributes["spotlightIndexingEnabled"])
        relationship.isOptional = flag(attributes["optional"])
        relationship.isTransient = flag(attributes["transient"])
        relationship.renamingIdentifier = nonEmpty(attributes["renamingIdentifier"] ?? attributes["elementID"])
        let ruleName = attributes["deletionRule"] ?? "Nullify"
        guard let rule = Self.deleteRules[ruleName] else {
            throw StrataError(.modelFile, at(line, "\(place): unknown deletionRule \"\(ruleName)\""))
        }
        relationship.deleteRule = rule
        return relationship
    }

    private func addFetchIndexElement(_ attributes: Attributes, line: Int) {
        guard let fetchIndex else { return }
        guard let propertyName = nonEmpty(attributes["property"]) else {
            let what = attributes["expression"].map { "expression \"\($0)\"" } ?? "element without a property"
            warn(line, "fetch index \(fetchIndex.name): ignored the \(what) (only property elements are supported)")
            return
        }
        var collation = FetchIndexElementDescription.CollationType.binary
        switch attributes["type"] ?? "Binary" {
        case "Binary": break
        case "RTree": collation = .rTree
        case let other: warn(line, "fetch index \(fetchIndex.name): unknown element type \"\(other)\" read as Binary")
        }
        fetchIndex.elements.append(FetchIndexElementDescription(
            propertyName: propertyName, collationType: collation, ascending: attributes["order"] != "descending"))
    }

    /// An old-style `<compoundIndex>` becomes a fetch index over the named properties.
    private func addCompoundIndex(to entity: EntityDescription, line: Int) {
        guard !names.isEmpty else {
            warn(line, "entity \(entity.name): an empty <compoundIndex> was ignored")
            return
        }
        let elements = names.map { FetchIndexElementDescription(propertyName: $0, collationType: .binary, ascending: true) }
        entity.indexes.append(FetchIndexDescription(name: "\(entity.name)CompoundIndex\(entity.indexes.count + 1)", elements: elements))
    }

    private func addUserInfoEntry(_ attributes: Attributes, line: Int) throws {
        let key = try required("key", of: "entry", attributes, line: line)
        let value = attributes["value"] ?? ""
        let owner = stack.count >= 2 ? stack[stack.count - 2] : ""
        if owner == "entity" { entity?.userInfo[key] = value } else { property?.userInfo[key] = value }
    }

    // MARK: Values

    /// Xcode's attribute type names (all but "Undefined", which is read as transient transformable).
    static let attributeTypes: [String: AttributeDescription.AttributeType] = [
        "Integer 16": .integer16, "Integer 32": .integer32, "Integer 64": .integer64,
        "Decimal": .decimal, "Double": .double, "Float": .float, "String": .string,
        "Boolean": .boolean, "Date": .date, "Binary": .binaryData, "UUID": .uuid, "URI": .uri,
        "Transformable": .transformable, "ObjectID": .objectID,
    ]

    /// Xcode's delete rule names.
    static let deleteRules: [String: DeleteRule] = [
        "Nullify": .nullifyDeleteRule, "Cascade": .cascadeDeleteRule,
        "Deny": .denyDeleteRule, "No Action": .noActionDeleteRule,
    ]

    /// The default value `text` as the Swift type attributes of `type` read as.
    private func defaultValue(_ text: String, type: AttributeDescription.AttributeType,
                              place: String, line: Int) throws -> Any? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let value: Any?
        switch type {
        case .integer16: value = Self.integer(trimmed).flatMap { Int16(exactly: $0) }
        case .integer32: value = Self.integer(trimmed).flatMap { Int32(exactly: $0) }
        case .integer64: value = Self.integer(trimmed)
        case .double: value = Double(trimmed)
        case .float: value = Float(trimmed)
        case .decimal: value = Double(trimmed) == nil ? nil : Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX"))
        case .string: return text
        case .boolean: value = Self.boolean(trimmed)
        case .date: value = Double(trimmed).map { Date(timeIntervalSinceReferenceDate: $0) }
        case .uuid: value = UUID(uuidString: trimmed)
        case .uri: value = URL(string: trimmed)
        case .binaryData, .transformable, .objectID:
            warn(line, "\(place): the default value of a \(type) attribute was ignored")
            return nil
        }
        if let value { return value }
        // Core Data reads defaults as Foundation's string conversions do ("NO" is 0 for a
        // number, "0.0" is false for a Boolean): so does Strata, with a warning. A value that
        // nothing converts (a date, UUID or URL that is not one) drops the default.
        let lenient: Any?
        switch type {
        case .integer16: lenient = Int16(clamping: FoundationNumberText.integer(trimmed))
        case .integer32: lenient = Int32(clamping: FoundationNumberText.integer(trimmed))
        case .integer64: lenient = FoundationNumberText.integer(trimmed)
        case .double: lenient = FoundationNumberText.double(trimmed)
        case .float: lenient = Float(FoundationNumberText.double(trimmed))
        case .decimal: lenient = FoundationNumberText.double(trimmed).finiteDecimal
        case .boolean: lenient = FoundationNumberText.bool(trimmed)
        default: lenient = nil
        }
        guard let lenient else {
            warn(line, "\(place): default value \"\(text)\" is not a valid \(type.swiftTypeName); the attribute has no default")
            return nil
        }
        warn(line, "\(place): default value \"\(text)\" is not a \(type.swiftTypeName); read as \(lenient), as Core Data reads it")
        return lenient
    }

    /// Minimum and maximum: values for numbers and dates, lengths for strings and data.
    private func applyLimits(_ attributes: Attributes, to attribute: AttributeDescription,
                             place: String, line: Int) throws {
        var minText = attributes["minValueString"], maxText = attributes["maxValueString"]
        if attribute.type == .date {
            minText = attributes["minDateTimeInterval"] ?? minText
            maxText = attributes["maxDateTimeInterval"] ?? maxText
        }
        guard minText != nil || maxText != nil else { return }
        func number(_ text: String?, _ label: String) throws -> Double? {
            guard let text else { return nil }
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)) else {
                throw StrataError(.modelFile, at(line, "\(place): \(label) \"\(text)\" is not a number"))
            }
            return value
        }
        switch attribute.type {
        case .integer16, .integer32, .integer64, .decimal, .double, .float, .date:
            attribute.minValue = try number(minText, "minimum")
            attribute.maxValue = try number(maxText, "maximum")
        case .string, .binaryData:
            attribute.minLength = try count(minText, "minimum length", place: place, line: line)
            attribute.maxLength = try count(maxText, "maximum length", place: place, line: line)
        default:
            warn(line, "\(place): minimum/maximum of a \(attribute.type) attribute were ignored")
        }
    }

    /// A non-negative whole number (counts, lengths); nil when absent.
    private func count(_ text: String?, _ label: String, place: String, line: Int) throws -> Int? {
        guard let text else { return nil }
        guard let value = Self.integer(text.trimmingCharacters(in: .whitespaces)).flatMap({ Int(exactly: $0) }), value >= 0 else {
            throw StrataError(.modelFile, at(line, "\(place): \(label) \"\(text)\" is not a non-negative whole number"))
        }
        return value
    }

    /// A whole number, also written as a decimal with no fraction ("3.0").
    private static func integer(_ text: String) -> Int64? {
        if let value = Int64(text) { return value }
        guard let double = Double(text), double.rounded() == double else { return nil }
        return Int64(exactly: double)
    }

    private static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "yes", "true", "1": return true
        case "no", "false", "0": return false
        default: return nil
        }
    }

    /// Xcode writes booleans as "YES"; absent means NO.
    private func flag(_ text: String?) -> Bool {
        text.flatMap(Self.boolean) ?? false
    }

    private func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    private func required(_ key: String, of element: String, _ attributes: Attributes, line: Int) throws -> String {
        guard let value = nonEmpty(attributes[key]) else {
            let owner = entity.map { " in entity \($0.name)" } ?? ""
            throw StrataError(.modelFile, at(line, "<\(element)>\(owner) has no \(key)"))
        }
        return value
    }

    private func at(_ line: Int, _ message: String) -> String {
        "\(path), line \(line): \(message)"
    }

    private func warn(_ line: Int, _ message: String) {
        result.warnings.append(at(line, message))
    }
}
