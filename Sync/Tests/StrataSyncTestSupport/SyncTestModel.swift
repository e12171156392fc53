// SyncTestModel: the model the sync tests share (every attribute type, inheritance, a unique
// code, to-one/to-many, many-to-many and ordered relationships).
//
// Owns: building the model in code, the same way in every process.

import Foundation
import Strata

public enum SyncTestModel {
    /// Item (every attribute type; `code` unique) with subentity SpecialItem; Tag (many-to-many
    /// with Item); Folder (an ordered to-many of items); Item.parent/children (one-to-many).
    /// `extraAttribute` adds Item.extra (a second model version).
    public static func make(extraAttribute: Bool = false) -> ManagedObjectModel {
        let item = EntityDescription(name: "Item")
        let special = EntityDescription(name: "SpecialItem")
        let tag = EntityDescription(name: "Tag")
        let folder = EntityDescription(name: "Folder")
        let tags = RelationshipDescription(name: "tags", destination: tag, toMany: true)
        let items = RelationshipDescription(name: "items", destination: item, toMany: true)
        tags.inverseRelationship = items
        items.inverseRelationship = tags
        let folderItems = RelationshipDescription(name: "items", destination: item, toMany: true)
        folderItems.isOrdered = true
        let itemFolder = RelationshipDescription(name: "folder", destination: folder)
        folderItems.inverseRelationship = itemFolder
        itemFolder.inverseRelationship = folderItems
        let parent = RelationshipDescription(name: "parent", destination: item)
        let children = RelationshipDescription(name: "children", destination: item, toMany: true)
        parent.inverseRelationship = children
        children.inverseRelationship = parent
        var itemProperties: [PropertyDescription] = [
            AttributeDescription(name: "code", type: .string),
            AttributeDescription(name: "title", type: .string),
            AttributeDescription(name: "count", type: .integer64),
            AttributeDescription(name: "small", type: .integer16),
            AttributeDescription(name: "medium", type: .integer32),
            AttributeDescription(name: "score", type: .double),
            AttributeDescription(name: "ratio", type: .float),
            AttributeDescription(name: "price", type: .decimal),
            AttributeDescription(name: "flag", type: .boolean),
            AttributeDescription(name: "stamp", type: .date),
            AttributeDescription(name: "blob", type: .binaryData),
            AttributeDescription(name: "ident", type: .uuid),
            AttributeDescription(name: "link", type: .uri),
            tags, itemFolder, parent, children,
        ]
        if extraAttribute { itemProperties.append(AttributeDescription(name: "extra", type: .string)) }
        item.properties = itemProperties
        item.uniquenessConstraints = [["code"]]
        special.properties = [AttributeDescription(name: "level", type: .integer64)]
        item.subentities = [special]
        tag.properties = [AttributeDescription(name: "name", type: .string), items]
        folder.properties = [AttributeDescription(name: "name", type: .string), folderItems]
        return ManagedObjectModel(entities: [item, special, tag, folder])
    }
}

