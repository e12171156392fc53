// XMLStoreReader: Core Data's XML store document read into a store's contents.
//
// Owns: checking the bytes are UTF-8 before any XML parser sees them (FoundationXML's parser
// traps on an invalid byte in a name; an XML store is a user's file and must never crash the
// app), parsing the document with external entities off, the shape the objects show (entity
// types, property names and kinds: the document has no schema), and the rows, bound to a model
// by that shape. Every error names the file, and the line and column (or byte offset) of what
// was wrong. Never touches the file system.

import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import StrataCore
import StrataGraph

enum XMLStoreReader {
    struct Attribute { var name: String; var type: String; var text: String; var line: Int }
    struct Relationship { var name: String; var type: String; var destination: String; var idrefs: [String]; var line: Int }
    struct Object { var type: String; var id: String; var line: Int; var attributes: [Attribute] = []; var relationships: [Relationship] = [] }
    struct Document {
        var uuid: String?
        var nextObjectID: Int64?
        var metadata: [String: any Sendable] = [:]
        var objects: [Object] = []
    }

    static func failure(_ file: String, _ what: String, line: Int, column: Int? = nil) -> StrataError {
        StrataError(.corrupt, "XML store \(file): \(what) at line \(line)\(column.map { ", column \($0)" } ?? "")")
    }

    // MARK: Parsing

    /// The objects and database info of the document `bytes`.
    static func parse(_ bytes: [UInt8], file: String) throws -> Document {
        if let (offset, line) = XMLProcessingInstructions.firstWithoutData(in: bytes) {
            throw StrataError(.corrupt, "XML store \(file): a processing instruction without a target or data at offset \(offset) (line \(line)); the document is damaged, nothing was read")
        }
        if let (offset, line, column) = firstInvalidUTF8(bytes) {
            throw StrataError(.corrupt, "XML store \(file): a byte that is not UTF-8 at offset \(offset) (line \(line), column \(column)); nothing was read")
        }
        // Fed as a stream, in chunks: given all at once, FoundationXML's parser reports an
        // internal error at the end of a document over libxml2's 10 MB lookup limit (a 41 MB
        // store of 100,000 quakes), and accepts a document cut short.
        let parser = XMLParser(stream: InputStream(data: Data(bytes)))
        parser.shouldResolveExternalEntities = false
        let delegate = DocumentBuilder(file: file)
        parser.delegate = delegate
        let parsed = parser.parse()
        if let error = delegate.error { throw error }
        guard parsed else {
            let reason = parser.parserError.map { ($0 as NSError).localizedDescription } ?? "the document is not well-formed XML"
            let at = delegate.malformedAt ?? (parser.lineNumber, parser.columnNumber)
            throw failure(file, "malformed XML (\(reason))", line: at.line, column: at.column)
        }
        guard delegate.sawDatabase else { throw failure(file, "no <database> element", line: parser.lineNumber) }
        // A document cut short must not pass for a whole one.
        guard delegate.closedDatabase else { throw failure(file, "the document ends before </database>", line: parser.lineNumber) }
        return delegate.document
    }

    /// The offset, line and column of the first byte that is not part of valid UTF-8 (RFC 3629:
    /// no overlong forms, no surrogates, nothing above U+10FFFF). ASCII bytes cost one compare.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> (Int, Int, Int)? {
        let bad: Int? = bytes.withUnsafeBufferPointer { buffer in
            let count = buffer.count
            var i = 0
            while i < count {
                let lead = buffer[i]
                if lead < 0x80 { i += 1; continue }
                let length: Int, low: UInt8, high: UInt8
                switch lead {
                case 0xC2...0xDF: (length, low, high) = (2, 0x80, 0xBF)
                case 0xE0: (length, low, high) = (3, 0xA0, 0xBF)
                case 0xE1...0xEC, 0xEE...0xEF: (length, low, high) = (3, 0x80, 0xBF)
                case 0xED: (length, low, high) = (3, 0x80, 0x9F)
                case 0xF0: (length, low, high) = (4, 0x90, 0xBF)
                case 0xF1...0xF3: (length, low, high) = (4, 0x80, 0xBF)
                case 0xF4: (length, low, high) = (4, 0x80, 0x8F)
                default: return i
                }
                guard i + length <= count, (low...high).contains(buffer[i + 1]) else { return i }
                for k in 2..<length where !(0x80...0xBF).contains(buffer[i + k]) { return i }
                i += length
            }
            return nil
        }
        guard let offset = bad else { return nil }
        var line = 1, lineStart = 0
        for (index, byte) in bytes[..<offset].enumerated() where byte == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        let column = String(decoding: bytes[lineStart..<offset], as: UTF8.self).unicodeScalars.count + 1
        return (offset, line, column)
    }

    /// Builds the document from the parser's events.
    /// Fields are used by one parser on one thread, one callback at a time: no access overlaps
    /// another, so they skip the run-time exclusivity checks (loading 100,000 quakes was 8%
    /// slower with them).
    final class DocumentBuilder: NSObject, XMLParserDelegate {
        let file: String
        @exclusivity(unchecked) var document = Document()
        @exclusivity(unchecked) var error: StrataError?
        @exclusivity(unchecked) var sawDatabase = false
        @exclusivity(unchecked) var closedDatabase = false
        /// Where the parser found the document not well-formed: read when it reports it (the
        /// parser's position afterwards is where it stopped reading, often much later).
        @exclusivity(unchecked) var malformedAt: (line: Int, column: Int)?
        @exclusivity(unchecked) private var path: [String] = []
        @exclusivity(unchecked) private var text = ""
        /// Whether the open element's text is wanted (white space between elements is not kept).
        @exclusivity(unchecked) private var collecting = false
        @exclusivity(unchecked) private var object: Object?
        @exclusivity(unchecked) private var attribute: Attribute?
        @exclusivity(unchecked) private var plist: XMLPropertyList.Builder?

        init(file: String) { self.file = file }

        private func fail(_ parser: XMLParser, _ what: String) {
            guard error == nil else { return }
            error = XMLStoreReader.failure(file, what, line: parser.lineNumber, column: parser.columnNumber)
            parser.abortParsing()
        }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            let parent = path.last
            path.append(name)
            text = ""
            collecting = name == "attribute" || name == "UUID" || name == "nextObjectID"
            if let plist {
                if !plist.open(name) { fail(parser, "<\(name)> inside the metadata property list") }
                return
            }
            switch (parent, name) {
            case (nil, "database"): sawDatabase = true
            case ("database", "databaseInfo"): break
            case ("databaseInfo", "version"), ("databaseInfo", "UUID"), ("databaseInfo", "nextObjectID"): break
            case ("databaseInfo", "metadata"): break
            case ("metadata", "plist"):
                plist = XMLPropertyList.Builder()
                _ = plist!.open(name)
            case ("database", "object"):
                guard let type = attributes["type"], !type.isEmpty, let id = attributes["id"], !id.isEmpty else {
                    return fail(parser, "an <object> without its type or id")
                }
                object = Object(type: type, id: id, line: parser.lineNumber)
            case ("object", "attribute"):
                guard let name = attributes["name"], let type = attributes["type"] else { return fail(parser, "an <attribute> without its name or type") }
                attribute = Attribute(name: name, type: type, text: "", line: parser.lineNumber)
            case ("object", "relationship"):
                guard let name = attributes["name"], let type = attributes["type"], let destination = attributes["destination"] else {
                    return fail(parser, "a <relationship> without its name, type or destination")
                }
                let refs = (attributes["idrefs"] ?? "").split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init)
                object?.relationships.append(Relationship(name: name, type: type, destination: destination, idrefs: refs, line: parser.lineNumber))
            default:
                fail(parser, "an unexpected <\(name)>" + (parent.map { " in <\($0)>" } ?? " at the top"))
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if let plist { plist.characters(string) } else if collecting { text += string }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if malformedAt == nil { malformedAt = (parser.lineNumber, parser.columnNumber) }
        }

        func parser(_ parser: XMLParser, foundCDATA block: Data) {
            let string = String(decoding: block, as: UTF8.self)
            if let plist { plist.characters(string) } else if collecting { text += string }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            path.removeLast()
            defer { collecting = false }
            if let builder = plist {
                if let problem = builder.close(name) { return fail(parser, "in the metadata: \(problem)") }
                if name == "plist" {
                    guard let metadata = builder.result as? [String: any Sendable] else { return fail(parser, "metadata that is not a dictionary") }
                    document.metadata = metadata
                    plist = nil
                }
                return
            }
            switch name {
            case "database": closedDatabase = path.isEmpty
            case "UUID": document.uuid = XMLStoreReader.trimmed(text)
            case "nextObjectID":
                guard let number = Int64(XMLStoreReader.trimmed(text)) else { return fail(parser, "the nextObjectID \"\(text)\"") }
                document.nextObjectID = number
            case "attribute":
                if var done = attribute {
                    done.text = text
                    object?.attributes.append(done)
                }
                attribute = nil
            case "object":
                if let object { document.objects.append(object) }
                object = nil
            default: break
            }
            text = ""
        }
    }

    // MARK: Shape

    /// The shape the document's objects show: each entity type with every property any of its
    /// objects has; a property given two kinds is an error naming its line.
    static func schema(of document: Document, file: String) throws -> StoredSchema {
        var order: [String] = []
        var properties: [String: [String: (kind: StoredSchema.Kind, order: Int)]] = [:]
        // Objects of a type usually show the same properties in the same order: such an object
        // adds nothing and is not looked at property by property.
        var lastShown: [String: [String]] = [:]
        for object in document.objects {
            let shown = object.attributes.map { $0.name + "\u{0}" + $0.type } + object.relationships.map { $0.name + "\u{0}" + $0.type + "\u{0}" + $0.destination }
            if lastShown[object.type] == shown { continue }
            lastShown[object.type] = shown
            if properties[object.type] == nil { order.append(object.type); properties[object.type] = [:] }
            func note(_ name: String, _ kind: StoredSchema.Kind, line: Int) throws {
                if let known = properties[object.type]![name] {
                    guard StoredSchema.fits(known.kind, into: kind) && StoredSchema.fits(kind, into: known.kind) else {
                        throw failure(file, "\(object.type).\(name) is \(kind) here and \(known.kind) before", line: line)
                    }
                    return
                }
                properties[object.type]![name] = (kind, properties[object.type]!.count)
            }
            for attribute in object.attributes {
                guard let type = XMLAttributeType.type(named: attribute.type) else {
                    throw failure(file, "the attribute \(attribute.name) of \(object.type) has the unknown type \"\(attribute.type)\"", line: attribute.line)
                }
                try note(attribute.name, .attribute(type), line: attribute.line)
            }
            for relationship in object.relationships {
                let counts = relationship.type.split(separator: "/")
                guard counts.count == 2, let maximum = Int(counts[1]) else {
                    throw failure(file, "the relationship \(relationship.name) of \(object.type) has the type \"\(relationship.type)\" (expected min/max)", line: relationship.line)
                }
                try note(relationship.name, maximum == 1 ? .toOne(destination: relationship.destination)
                                                         : .toMany(destination: relationship.destination, ordered: false), line: relationship.line)
            }
        }
        return StoredSchema(entities: order.map { type in
            StoredSchema.Entity(name: type, properties: properties[type]!.sorted { $0.value.order < $1.value.order }
                .map { StoredSchema.Property(name: $0.key, kind: $0.value.kind) })
        })
    }

    // MARK: Rows

    /// The document's objects as rows of the entities `binding` gives, in a store named
    /// `identifier`. Object IDs `z<number>` keep their number as primary key; others get new ones.
    static func contents(of document: Document, schema: StoredSchema, binding: StoredBinding, file: String,
                         metadata: [String: any Sendable]) throws -> StoreContents {
        let identifier = metadata[StoreMetadataKey.storeUUID] as? String ?? UUID().uuidString
        let store = StoreIdentity.named(identifier)
        let entityPosition = Dictionary(schema.entities.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        // Primary keys: the number of a `z<number>` ID, else the next free one.
        var keys: [String: (key: Int64, entity: EntityDescription)] = [:]
        var used = Set<Int64>()
        var unnumbered: [(Int, Object)] = []
        for (index, object) in document.objects.enumerated() {
            guard keys[object.id] == nil else { throw failure(file, "the object id \(object.id) is used twice", line: object.line) }
            let entity = binding.entities[entityPosition[object.type]!].entity
            if object.id.first == "z", let number = Int64(object.id.dropFirst()), number > 0, used.insert(number).inserted {
                keys[object.id] = (number, entity)
            } else {
                keys[object.id] = (-1, entity)
                unnumbered.append((index, object))
            }
        }
        var next = max(document.nextObjectID ?? 1, (used.max() ?? 0) + 1)
        for (_, object) in unnumbered {
            keys[object.id]!.key = next
            next += 1
        }
        var rowsByEntity: [ObjectIdentifier: (entity: EntityDescription, rows: [StoreRow])] = [:]
        let slotMaps = schema.entities.indices.map { position in
            Dictionary(zip(schema.entities[position].properties.map(\.name), binding.entities[position].slots), uniquingKeysWith: { a, _ in a })
        }
        // A property the document's entity has and an object omits is nil (Core Data writes no
        // element for nil); one the document does not know (a model version later, migrated)
        // takes the model's default, as in the .binary store.
        let startRows = binding.entities.map { bound in
            var row = bound.entity.defaultRow
            for slot in bound.slots.compactMap({ $0 }) { row[slot] = .null }
            return row
        }
        for object in document.objects {
            let position = entityPosition[object.type]!
            let bound = binding.entities[position]
            let slotOf = slotMaps[position]
            let entity = bound.entity
            var values = startRows[position]
            for slot in entity.slots.indices where entity.slots[slot] is RelationshipDescription {
                if (entity.slots[slot] as! RelationshipDescription).isToMany { values[slot] = .objectIDs([]) }
            }
            for attribute in object.attributes {
                guard let slot = slotOf[attribute.name] ?? nil else { continue }
                let type = XMLAttributeType.type(named: attribute.type)!
                guard let value = value(of: attribute.text, type: type, store: identifier, entities: binding) else {
                    throw failure(file, "the \(attribute.type) value \"\(attribute.text.prefix(40))\" of \(object.type).\(attribute.name)", line: attribute.line)
                }
                values[slot] = StoredBinding.converted(value, for: entity, slot: slot)
            }
            for relationship in object.relationships {
                guard let slot = slotOf[relationship.name] ?? nil else { continue }
                var ids: [ManagedObjectID] = []
                for ref in relationship.idrefs {
                    guard let target = keys[ref] else {
                        throw failure(file, "\(object.type).\(relationship.name) names the object \(ref), which the document does not have", line: relationship.line)
                    }
                    ids.append(ManagedObjectID(entity: target.entity, store: store, key: .permanent(target.key)))
                }
                if (entity.slots[slot] as? RelationshipDescription)?.isToMany == true {
                    values[slot] = .objectIDs(ids)
                } else {
                    guard ids.count <= 1 else {
                        throw failure(file, "the to-one \(object.type).\(relationship.name) names \(ids.count) objects", line: relationship.line)
                    }
                    values[slot] = ids.first.map { .objectID($0) } ?? .null
                }
            }
            let key = keys[object.id]!.key
            rowsByEntity[ObjectIdentifier(entity), default: (entity, [])].rows.append(
                StoreRow(id: ManagedObjectID(entity: entity, store: store, key: .permanent(key)), version: 1, values: values))
        }
        var metadata = metadata
        metadata[StoreMetadataKey.storeUUID] = identifier
        let entities = rowsByEntity.values.sorted { $0.entity.name < $1.entity.name }
            .map { StoredEntityRows(entity: $0.entity, rows: $0.rows.sorted { $0.id.primaryKey! < $1.id.primaryKey! }) }
        return StoreContents(entities: entities, metadata: metadata, nextKey: next)
    }

    /// `text` without leading and trailing XML white space (the common case, none, costs a look
    /// at two bytes).
    static func trimmed(_ text: String) -> String {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
        let utf8 = text.utf8
        guard let first = utf8.first, let last = utf8.last, isSpace(first) || isSpace(last) else { return text }
        guard let start = utf8.firstIndex(where: { !isSpace($0) }), let end = utf8.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(text[start...end])
    }

    /// An attribute's element text as a value of `type`; nil when it is not one.
    static func value(of text: String, type: AttributeDescription.AttributeType, store: String, entities: StoredBinding) -> RowValue? {
        let trimmed = self.trimmed(text)
        switch type {
        case .integer16, .integer32, .integer64: return Int64(trimmed).map { .integer($0) }
        case .double: return Double(trimmed).map { .double($0) }
        case .float: return Float(trimmed).map { .float($0) }
        case .decimal: return Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) }
        case .string: return .string(text)
        case .boolean:
            switch trimmed.lowercased() {
            case "1", "yes", "true": return .boolean(true)
            case "0", "no", "false": return .boolean(false)
            default: return nil
            }
        case .date: return Double(trimmed).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .binaryData, .transformable: return Data(base64Encoded: trimmed.filter { !$0.isWhitespace }).map { .data($0) }
        case .uuid: return UUID(uuidString: trimmed).map { .uuid($0) }
        case .uri: return URL(string: trimmed).map { .uri($0) }
        case .objectID:
            // x-strata://<store>/<Entity>/p<key>: an object of this store, else nothing.
            guard let url = URL(string: trimmed), url.host == store, url.pathComponents.count == 3,
                  let entity = entities.entities.first(where: { $0.entity.name == url.pathComponents[1] })?.entity,
                  url.pathComponents[2].first == "p", let key = Int64(url.pathComponents[2].dropFirst()) else { return .null }
            return .objectID(ManagedObjectID(entity: entity, storeIdentifier: store, primaryKey: key))
        }
    }
}
