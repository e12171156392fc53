import XCTest
import Foundation
@testable import Strata
@testable import StrataGraph
import _StrataTestSupport

/// Referential integrity of native commits: a save may not refer to a row that another save
/// deleted, even when nothing else of the save conflicts (a relationship without an inverse).
final class NativeReferenceTests: XCTestCase {
    func testACommitReferringToADeletedRowIsRefused() throws {
        let node = EntityDescription(name: "Node")
        let favorite = RelationshipDescription(name: "favorite", destination: node)
        let picks = RelationshipDescription(name: "picks", destination: node, toMany: true)
        node.properties = [AttributeDescription(name: "name", type: .string), favorite, picks]
        let url = TestStores.freshFile()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [node]))
        try coordinator.addPersistentStore(type: .native, configuration: nil, at: url)
        for (policy, key) in [(MergePolicy.mergeByPropertyObjectTrump, "favorite"), (.mergeByPropertyStoreTrump, "picks"), (.error, "favorite")] {
            let mine = ManagedObjectContext(.privateQueue)
            mine.persistentStoreCoordinator = coordinator
            mine.mergePolicy = policy
            let (owner, target): (ManagedObject, ManagedObject) = try mine.performAndWait {
                let owner = EntityDescription.insertNewObject(forEntityName: "Node", into: mine)
                let target = EntityDescription.insertNewObject(forEntityName: "Node", into: mine)
                try mine.save()
                return (owner, target)
            }
            let theirs = ManagedObjectContext(.privateQueue)
            theirs.persistentStoreCoordinator = coordinator
            try theirs.performAndWait {
                theirs.delete(try theirs.existingObject(with: target.objectID))
                try theirs.save()
            }
            try mine.performAndWait {
                owner.setValue(key == "favorite" ? target : [target], forKey: key)
                XCTAssertThrowsError(try mine.save(), "\(policy): a reference to a deleted row was saved") { error in
                    XCTAssertEqual((error as? StrataError)?.code, .mergeConflict, "\(error)")
                }
                mine.rollback()
            }
            let fresh = ManagedObjectContext(.privateQueue)
            fresh.persistentStoreCoordinator = coordinator
            try fresh.performAndWait {
                let stored = try fresh.existingObject(with: owner.objectID)
                XCTAssertNil(stored.value(forKey: "favorite"))
                XCTAssertEqual((stored.value(forKey: "picks") as? Set<ManagedObject>)?.count ?? 0, 0)
            }
        }
        // A reference to a row the same save inserts, or already stored, is fine.
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let a = EntityDescription.insertNewObject(forEntityName: "Node", into: context)
            let b = EntityDescription.insertNewObject(forEntityName: "Node", into: context)
            a.setValue(b, forKey: "favorite")
            try context.save()
            b.setValue([a], forKey: "picks")
            try context.save()
        }
        try TestStores.assertSound(url)
    }
}
