// XMLStoreWriter: a store's contents as Core Data's XML store document.
//
// Owns: the document Core Data writes for `NSXMLStoreType` (FORMAT.md §21): the prolog and
// DOCTYPE, `<databaseInfo>` (version, UUID, nextObjectID, the metadata as a property list), then
// one `<object type="ENTITY" id="z…">` per row with its non-nil attributes and its
// relationships; entity types upper-cased, property names lower-cased, dates as seconds since
// 2001 with 20 decimals, data in base64, relationship targets as space-separated ids. Text is
// escaped for XML; characters XML 1.0 cannot hold are refused with the entity and property
// named. Never touches the file system.

import Foundation
import StrataCore
import StrataGraph

enum XMLStoreWriter {
    /// Core Data's XML store version number, written in `<databaseInfo>`.
    static let version = 134_481_920

    /// The metadata as the file keeps it: Strata's keys and Core Data's (`NSStoreUUID`,
    /// `NSStoreType`, `NSStoreModelVersionHashes`, `NSStoreModelVersionHashesVersion`), as Core
    /// Data writes them. Version hashes a Core Data file came with are kept; a store Strata
    /// created gets its own entity hashes there (Strata's, not Core Data's: FORMAT.md §21).
    static func coreDataMetadata(_ metadata: [String: any Sendable]) -> [String: any Sendable] {
        var metadata = metadata
        metadata["NSStoreUUID"] = metadata[StoreMetadataKey.storeUUID]
        metadata["NSStoreType"] = StoreType.xml.rawValue
        if metadata["NSStoreModelVersionHashes"] == nil { metadata["NSStoreModelVersionHashes"] = metadata[StoreMetadataKey.versionHashes] }
        if metadata["NSStoreModelVersionHashesVersion"] == nil { metadata["NSStoreModelVersionHashesVersion"] = Int64(3) }
        return metadata
    }

    /// The document bytes of `contents`.
    static func encode(_ contents: StoreContents) throws -> [UInt8] {
        var out = ""
        out.reserveCapacity(256 + contents.entities.reduce(0) { $0 + $1.rows.count * 256 })
        out += "<?xml version=\"1.0\" standalone=\"yes\"?>\n"
        out += "<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\">\n\n"
        out += "<database>\n    <databaseInfo>\n"
        out += "        <version>\(version)</version>\n"
        out += "        <UUID>\(escaped(contents.metadata[StoreMetadataKey.storeUUID] as? String ?? ""))</UUID>\n"
        out += "        <nextObjectID>\(contents.nextKey)</nextObjectID>\n"
        out += "        <metadata>\n"
        try XMLPropertyList.write(coreDataMetadata(contents.metadata), indent: "            ", to: &out)
        out += "        </metadata>\n    </databaseInfo>\n"
        for stored in contents.entities {
            let entity = stored.entity
            let slots = StoredSchema.storedSlots(of: entity)
            let type = entity.name.uppercased()
            for row in stored.rows {
                out += "    <object type=\"\(escaped(type))\" id=\"z\(row.id.primaryKey ?? 0)\">\n"
                for slot in slots {
                    let property = entity.slots[slot]
                    let value = slot < row.values.count ? row.values[slot] : .null
                    let name = escaped(property.name.lowercased())
                    if let relationship = property as? RelationshipDescription {
                        let destination = escaped((relationship.destinationEntity?.name ?? "").uppercased())
                        var ids: [ManagedObjectID] = []
                        switch value {
                        case .objectID(let id): ids = [id]
                        case .objectIDs(let many): ids = many
                        default: break
                        }
                        let refs = ids.compactMap { $0.primaryKey.map { "z\($0)" } }.joined(separator: " ")
                        out += "        <relationship name=\"\(name)\" type=\"\(relationship.isToMany ? "0/0" : "1/1")\" destination=\"\(destination)\""
                        out += refs.isEmpty ? "></relationship>\n" : " idrefs=\"\(refs)\"></relationship>\n"
                        continue
                    }
                    guard let attribute = property as? AttributeDescription, !value.isNull else { continue }
                    let text = try self.text(of: value, entity: entity.name, property: property.name)
                    out += "        <attribute name=\"\(name)\" type=\"\(XMLAttributeType.name(of: attribute.attributeType))\">\(text)</attribute>\n"
                }
                out += "    </object>\n"
            }
        }
        out += "</database>\n"
        return Array(out.utf8)
    }

    /// A value as the element text Core Data writes.
    static func text(of value: RowValue, entity: String, property: String) throws -> String {
        switch value {
        case .null: return ""
        case .integer(let v): return String(v)
        case .double(let v): return v.description
        case .float(let v): return v.description
        case .decimal(let v): return v.description
        case .string(let v):
            guard let text = checkedText(v) else {
                throw StrataError(.invalidArgument, "\(entity).\(property) holds a character XML cannot store (a control character other than tab, newline or return); save it in a .binary or .native store")
            }
            return text
        case .boolean(let v): return v ? "1" : "0"
        case .date(let v): return String(format: "%.20f", v.timeIntervalSinceReferenceDate)
        case .data(let v): return v.base64EncodedString()
        case .uuid(let v): return v.uuidString
        case .uri(let v): return escaped(v.absoluteString)
        case .objectID(let id): return escaped(id.uriRepresentation().absoluteString)
        case .objectIDs(let ids): return escaped(ids.map { $0.uriRepresentation().absoluteString }.joined(separator: " "))
        }
    }

    /// `text` escaped for element content, or nil when it holds a character XML 1.0 cannot hold.
    /// A carriage return is written as `&#13;` (a reader would turn a raw one into a newline).
    static func checkedText(_ text: String) -> String? {
        // Most text has nothing to escape: one pass over its bytes says so.
        let plain = text.utf8.allSatisfy { byte in
            byte >= 0x20 && byte != UInt8(ascii: "&") && byte != UInt8(ascii: "<") && byte != UInt8(ascii: ">")
                && byte != UInt8(ascii: "\"") && byte != 0xEF
        }
        if plain { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "\r": result += "&#13;"
            case "\t", "\n": result.unicodeScalars.append(scalar)
            default:
                let v = scalar.value
                if v < 0x20 || v == 0xFFFE || v == 0xFFFF { return nil }
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func escaped(_ text: String) -> String { checkedText(text) ?? text.unicodeScalars.filter { $0.value >= 0x20 }.map(String.init).joined() }
}

/// The attribute type names of Core Data's XML store (`type="int32"`).
enum XMLAttributeType {
    static func name(of type: AttributeDescription.AttributeType) -> String {
        switch type {
        case .integer16: return "int16"
        case .integer32: return "int32"
        case .integer64: return "int64"
        case .decimal: return "decimal"
        case .double: return "double"
        case .float: return "float"
        case .string: return "string"
        case .boolean: return "bool"
        case .date: return "date"
        case .binaryData: return "binary"
        case .uuid: return "uuid"
        case .uri: return "uri"
        case .transformable: return "transformable"
        case .objectID: return "objectid"
        }
    }

    static func type(named name: String) -> AttributeDescription.AttributeType? {
        if let exact = exactType(named: name) { return exact }
        return exactType(named: name.lowercased())
    }

    /// `type(named:)` for the spelling Core Data writes (no case folding: this runs per value).
    private static func exactType(named name: String) -> AttributeDescription.AttributeType? {
        switch name {
        case "int16": return .integer16
        case "int32": return .integer32
        case "int64": return .integer64
        case "decimal": return .decimal
        case "double": return .double
        case "float": return .float
        case "string": return .string
        case "bool": return .boolean
        case "date": return .date
        case "binary": return .binaryData
        case "uuid": return .uuid
        case "uri": return .uri
        case "transformable": return .transformable
        case "objectid": return .objectID
        default: return nil
        }
    }
}
