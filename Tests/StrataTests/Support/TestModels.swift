// TestModels: the models the object-layer tests share (Earthquakes; Posts/Tags/Attachments/ImageData)
// and a one-call stack on an in-memory store.

import Foundation
import Strata

final class Quake: ManagedObject {
    @Managed var magnitude: Double = 0
    @Managed var place: String = ""
    @Managed var time: Date = .distantPast
    @Managed var code: String = ""
    @Managed var depth: Double? = nil
    @Managed var region: Region?
}

final class Region: ManagedObject {
    @Managed var name: String = ""
    @Managed(inverse: \Quake.region) var quakes: Set<Quake> = []
}

final class Post: ManagedObject {
    @Managed var title: String = ""
    @Managed var rating: Int = 0
    @Managed var tags: Set<Tag> = []
    @Managed(inverse: \Attachment.post) var attachments: Set<Attachment> = []

    nonisolated(unsafe) static var hookLog: [String] = []
    override func awakeFromInsert() { Self.hookLog.append("awakeFromInsert \(title)") }
    override func awakeFromFetch() { Self.hookLog.append("awakeFromFetch \(title)") }
    override func willSave() { Self.hookLog.append("willSave \(title)") }
    override func didSave() { Self.hookLog.append("didSave \(title)") }
    override func prepareForDeletion() { Self.hookLog.append("prepareForDeletion \(title)") }
}

final class Tag: ManagedObject {
    @Managed var name: String = ""
    @Managed(inverse: \Post.tags) var posts: Set<Post> = []
}

final class Attachment: ManagedObject {
    @Managed var identifier: String = ""
    @Managed var post: Post?
    @Managed(inverse: \ImageData.attachment) var imageData: ImageData?
}

final class ImageData: ManagedObject {
    @Managed var bytes: Data = Data()
    @Managed var attachment: Attachment?
}

enum TestModels {
    /// Quake + Region from @Managed classes, with Quake.code unique.
    static func earthquakes() throws -> ManagedObjectModel {
        let model = try ManagedObjectModel(classes: [Quake.self, Region.self])
        model.entitiesByName["Quake"]!.uniquenessConstraints = [["code"]]
        return model
    }

    /// Posts/Tags/Attachments/ImageData from classes, with delete rules and derived Tag.postCount.
    static func posts() throws -> ManagedObjectModel {
        let model = try ManagedObjectModel(classes: [Post.self, Tag.self, Attachment.self, ImageData.self])
        let entities = model.entitiesByName
        entities["Post"]!.relationshipsByName["attachments"]!.deleteRule = .cascadeDeleteRule
        entities["Attachment"]!.relationshipsByName["imageData"]!.deleteRule = .cascadeDeleteRule
        let postCount = DerivedAttributeDescription(name: "postCount", type: .integer64, derivationExpression: "posts.@count")
        entities["Tag"]!.properties.append(postCount)
        return model
    }

    /// The model of strata-test-helper's CrashModel (Quake with a unique code, a batch index and
    /// a region; Region with its quakes), built the same way, for tests that share a store with it.
    static func crashModel() -> ManagedObjectModel {
        let quake = EntityDescription(name: "Quake")
        let region = EntityDescription(name: "Region")
        let quakes = RelationshipDescription(name: "quakes", destination: quake, toMany: true)
        let owner = RelationshipDescription(name: "region", destination: region)
        quakes.inverseRelationship = owner
        owner.inverseRelationship = quakes
        quake.properties = [AttributeDescription(name: "code", type: .string), AttributeDescription(name: "batch", type: .integer64),
                            AttributeDescription(name: "magnitude", type: .double), owner]
        quake.uniquenessConstraints = [["code"]]
        quake.indexes = [FetchIndexDescription(name: "byBatch", elements: [FetchIndexElementDescription(property: quake.properties[1])])]
        region.properties = [AttributeDescription(name: "name", type: .string), quakes]
        return ManagedObjectModel(entities: [quake, region])
    }

    /// A stack on a fresh store of the suites' type (`TestStores.type`): private to the
    /// coordinator unless `url` names one (`/dev/null/<name>`).
    static func stack(_ model: ManagedObjectModel, url: String = "/dev/null",
                      type: ManagedObjectContext.ConcurrencyType = .privateQueue,
                      storeType: StoreType = TestStores.type) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try TestStores.add(to: coordinator, path: url, type: storeType)
        let context = ManagedObjectContext(type)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }
}
