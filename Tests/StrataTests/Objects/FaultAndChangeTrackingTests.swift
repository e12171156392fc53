import XCTest
import Strata
import StrataGraph

/// Faults, object IDs, dynamic access checks and change tracking.
final class FaultAndChangeTrackingTests: XCTestCase {
    private func savedRegionWithQuakes(_ count: Int) throws -> (PersistentStoreCoordinator, ManagedObjectID) {
        let (coordinator, context) = try TestModels.stack(TestModels.earthquakes())
        let id: ManagedObjectID = try context.performAndWait {
            let region = Region(context: context)
            region.name = "Pacific"
            for i in 0..<count {
                let quake = Quake(context: context)
                quake.code = "q\(i)"
                quake.magnitude = Double(i)
                quake.region = region
            }
            try context.save()
            return region.objectID
        }
        return (coordinator, id)
    }

    func testFetchedAndRelatedObjectsAreFaultsUntilRead() throws {
        let (coordinator, regionID) = try savedRegionWithQuakes(3)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let regions = try context.fetch(FetchRequest<Region>(entityName: "Region"))
            XCTAssertEqual(regions.count, 1)
            let region = regions[0]
            XCTAssertEqual(region.objectID, regionID)
            XCTAssertTrue(region.isFault)
            XCTAssertEqual(region.name, "Pacific")
            XCTAssertFalse(region.isFault)
            let quakes = region.quakes
            XCTAssertEqual(quakes.count, 3)
            XCTAssertTrue(quakes.allSatisfy(\.isFault), "objects reached through a relationship are faults")
            XCTAssertEqual(quakes.map(\.magnitude).sorted(), [0, 1, 2])
            XCTAssertTrue(quakes.allSatisfy { !$0.isFault })
            XCTAssertTrue(quakes.allSatisfy { $0.region === region })

            let request = FetchRequest<Quake>(entityName: "Quake")
            request.returnsObjectsAsFaults = false
            context.reset()
            XCTAssertTrue(try context.fetch(request).allSatisfy { !$0.isFault })
        }
    }

    /// A fetched fault keeps the row its fetch read only while nothing else was committed: a save
    /// through the coordinator in between makes it fire with the new values (unpinned context).
    func testFaultsFetchedBeforeAnotherSaveFireWithTheSavedValues() throws {
        let (coordinator, _) = try savedRegionWithQuakes(4)
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        let writer = ManagedObjectContext(.privateQueue)
        writer.persistentStoreCoordinator = coordinator
        let request = FetchRequest<Quake>(entityName: "Quake")
        request.sortDescriptors = [FetchSortDescriptor(key: "code", ascending: true)]
        let faults = try reader.performAndWait { try reader.fetch(request) }
        XCTAssertTrue(reader.performAndWait { faults.allSatisfy(\.isFault) })
        try writer.performAndWait {
            let quakes = try writer.fetch(request)
            quakes[1].magnitude = 41
            writer.delete(quakes[2])
            try writer.save()
        }
        reader.performAndWait {
            XCTAssertEqual(faults[0].magnitude, 0, "an unchanged row reads as saved")
            XCTAssertEqual(faults[1].magnitude, 41, "a fault fired after another save reads the saved value, not the fetched row")
            XCTAssertEqual(faults[2].magnitude, 0, "a row deleted since the fetch reads as defaults")
            XCTAssertTrue(faults[2].isDeleted, "a row deleted since the fetch is an inaccessible fault")
        }
        // And without a save in between, the fetched values are what faults fire with.
        let again = try reader.performAndWait { () -> [Quake] in reader.reset(); return try reader.fetch(request) }
        reader.performAndWait { XCTAssertEqual(again.map(\.magnitude), [0, 41, 3]) }
    }

    /// The values a fetch left in a fault are the context's, not the object's: once the context
    /// is gone the fault cannot fire, even though nothing was saved since the fetch. The object
    /// is left with its defaults (getters never trap) and throwing accessors keep throwing.
    func testAFetchedFaultWhoseContextIsGoneDoesNotFire() throws {
        let (coordinator, _) = try savedRegionWithQuakes(2)
        var context: ManagedObjectContext? = ManagedObjectContext(.privateQueue)
        context!.persistentStoreCoordinator = coordinator
        let faults = try context!.performAndWait { try context!.fetch(FetchRequest<Quake>(entityName: "Quake")) }
        XCTAssertEqual(faults.count, 2)
        context = nil
        XCTAssertTrue(faults[0].isFault)
        XCTAssertNil(faults[0].managedObjectContext)
        XCTAssertThrowsError(try faults[0].checkedValue(forKey: "magnitude")) {
            XCTAssertEqual(($0 as? StrataError)?.code, .objectNotFound)
        }
        XCTAssertFalse(faults[0].isFault, "an unfulfillable fault holds its defaults")
        XCTAssertEqual(faults[0].magnitude, 0)
        XCTAssertThrowsError(try faults[0].checkedValue(forKey: "magnitude"), "and keeps throwing")
    }

    func testFaultOfADeletedRowBecomesInaccessibleOrThrows() throws {
        let (coordinator, regionID) = try savedRegionWithQuakes(0)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        let region = context.performAndWait { context.object(with: regionID) as! Region }
        let deleter = ManagedObjectContext(.privateQueue)
        deleter.persistentStoreCoordinator = coordinator
        try deleter.performAndWait {
            deleter.delete(try deleter.existingObject(with: regionID))
            try deleter.save()
        }
        try context.performAndWait {
            XCTAssertEqual(region.name, "", "an inaccessible fault reads as defaults")
            XCTAssertTrue(region.isDeleted)
            XCTAssertThrowsError(try context.existingObject(with: regionID)) {
                XCTAssertEqual(($0 as? StrataError)?.code, .objectNotFound)
            }
        }
    }

    func testObjectIDsAreTemporaryUntilSavedAndURIsRoundTrip() throws {
        let (coordinator, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let quake = Quake(context: context)
            let temporary = quake.objectID
            XCTAssertTrue(temporary.isTemporaryID)
            XCTAssertNil(coordinator.managedObjectID(forURIRepresentation: temporary.uriRepresentation()))
            try context.save()
            let permanent = quake.objectID
            XCTAssertFalse(permanent.isTemporaryID)
            XCTAssertNotEqual(temporary, permanent)
            let uri = permanent.uriRepresentation()
            XCTAssertEqual(uri.scheme, "x-strata")
            XCTAssertEqual(coordinator.managedObjectID(forURIRepresentation: uri), permanent)
            XCTAssertTrue(context.object(with: permanent) === quake)
            XCTAssertNil(coordinator.managedObjectID(forURIRepresentation: URL(string: "x-strata://nostore/Quake/p1")!))
        }
    }

    func testObtainPermanentIDsBeforeSaveKeepsRelationships() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let region = Region(context: context)
            let quake = Quake(context: context)
            quake.region = region
            try context.obtainPermanentIDs(for: [quake, region])
            XCTAssertFalse(quake.objectID.isTemporaryID)
            XCTAssertTrue(quake.region === region)
            XCTAssertEqual(region.quakes, [quake])
            try context.save()
            XCTAssertTrue(quake.region === region)
        }
    }

    func testDynamicAccessChecksKeysAndTypes() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let quake = Quake(context: context)
            XCTAssertThrowsError(try quake.setCheckedValue("big", forKey: "magnitude")) { error in
                let error = error as! StrataError
                XCTAssertEqual(error.code, .typeMismatch)
                XCTAssertTrue(error.message.contains("Quake.magnitude"), error.message)
                XCTAssertTrue(error.message.contains("String"), error.message)
            }
            XCTAssertThrowsError(try quake.checkedValue(forKey: "nope")) { error in
                XCTAssertEqual((error as! StrataError).code, .unknownKey)
                XCTAssertTrue((error as! StrataError).message.contains("nope"))
            }
            XCTAssertThrowsError(try quake.setCheckedValue(Quake(context: context), forKey: "region")) {
                XCTAssertEqual(($0 as! StrataError).code, .typeMismatch)
            }
            try quake.setCheckedValue(Int16(3), forKey: "magnitude")
            XCTAssertEqual(quake.magnitude, 3)
            let region = Region(context: context)
            try region.setCheckedValue(Set([quake]), forKey: "quakes")
            XCTAssertTrue(quake.region === region)
            XCTAssertEqual(region.value(forKey: "quakes") as? Set<ManagedObject>, [quake])
        }
    }

    func testChangeTrackingQueries() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let quake = Quake(context: context)
            quake.magnitude = 1
            XCTAssertTrue(quake.isInserted)
            XCTAssertFalse(quake.isUpdated)
            XCTAssertTrue(quake.hasChanges)
            XCTAssertEqual(quake.committedValues(forKeys: nil).count, 0)
            try context.save()
            XCTAssertFalse(quake.isInserted)
            XCTAssertFalse(quake.hasChanges)
            XCTAssertFalse(context.hasChanges)
            quake.magnitude = 2
            quake.place = "here"
            XCTAssertTrue(quake.isUpdated)
            XCTAssertEqual(context.updatedObjects, [quake])
            XCTAssertEqual(Set(quake.changedValues().keys), ["magnitude", "place"])
            XCTAssertEqual(quake.committedValues(forKeys: ["magnitude"])["magnitude"] as? Double, 1)
            quake.place = ""
            quake.magnitude = 1
            XCTAssertFalse(quake.hasChanges, "setting values back to the committed ones clears the change")
            XCTAssertTrue(context.updatedObjects.isEmpty)
            context.delete(quake)
            XCTAssertTrue(quake.isDeleted)
            XCTAssertEqual(context.deletedObjects, [quake])
            try context.save()
            XCTAssertNil(quake.managedObjectContext)
        }
    }

    func testRollbackResetAndRefresh() throws {
        let (coordinator, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let kept = Quake(context: context)
            kept.code = "kept"; kept.magnitude = 1
            try context.save()
            kept.magnitude = 5
            let dropped = Quake(context: context)
            context.rollback()
            XCTAssertEqual(kept.magnitude, 1)
            XCTAssertNil(dropped.managedObjectContext)
            XCTAssertFalse(context.hasChanges)

            let other = ManagedObjectContext(.privateQueue)
            other.persistentStoreCoordinator = coordinator
            try other.performAndWait {
                let copy = try other.existingObject(with: kept.objectID) as! Quake
                copy.magnitude = 8
                copy.place = "moved"
                try other.save()
            }
            kept.place = "local"
            context.refresh(kept, mergeChanges: true)
            XCTAssertEqual(kept.magnitude, 8, "refresh loads the stored values")
            XCTAssertEqual(kept.place, "local", "and keeps local changes on top")
            context.refresh(kept, mergeChanges: false)
            XCTAssertTrue(kept.isFault)
            XCTAssertEqual(kept.place, "moved")
            context.reset()
            XCTAssertTrue(context.registeredObjects.isEmpty)
            XCTAssertNil(kept.managedObjectContext)
        }
    }

    func testObjectsOutlivingTheirContextReportNoContext() throws {
        var orphan: Quake?
        weak var released: ManagedObjectContext?
        do {
            let (_, context) = try TestModels.stack(TestModels.earthquakes())
            released = context
            orphan = try context.performAndWait {
                let quake = Quake(context: context)
                quake.code = "orphan"
                try context.save()
                XCTAssertTrue(quake.managedObjectContext === context)
                return quake
            }
        }
        XCTAssertNil(released, "objects do not keep their context alive")
        XCTAssertNil(try XCTUnwrap(orphan).managedObjectContext)
    }

    func testObjectIDsOutliveTheirModelAndStack() throws {
        var ids: [ManagedObjectID] = []
        weak var releasedModel: ManagedObjectModel?
        weak var keptEntity: EntityDescription?
        do {
            // A model built in code (no class registry keeps its entity).
            let thing = EntityDescription(name: "Thing", properties: [AttributeDescription(name: "label", type: .string)])
            let model = ManagedObjectModel(entities: [thing])
            releasedModel = model
            keptEntity = thing
            let (_, context) = try TestModels.stack(model)
            ids = try context.performAndWait {
                let saved = ManagedObject(entity: thing, insertInto: context)
                saved.setValue("kept", forKey: "label")
                let temporary = ManagedObject(entity: thing, insertInto: context).objectID
                try context.save()
                return [saved.objectID, temporary]
            }
        }
        XCTAssertNil(releasedModel, "IDs do not keep their model alive")
        XCTAssertNotNil(keptEntity, "but the entity they name lives on")
        XCTAssertEqual(ids.map(\.entity.name), ["Thing", "Thing"])
        XCTAssertTrue(ids[0].uriRepresentation().absoluteString.hasSuffix("/Thing/p1"), ids[0].description)
        XCTAssertNotEqual(ids[0], ids[1])
    }

    func testChangedObjectsNobodyHoldsAreKeptUntilSaved() throws {
        let (coordinator, _) = try savedRegionWithQuakes(6)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        weak var updated: Quake?, deleted: Quake?, inserted: Quake?, insertedThenDeleted: Quake?
        try context.performAndWait {
            let quakes = try context.fetch(FetchRequest<Quake>(entityName: "Quake")).sorted { $0.code < $1.code }
            quakes[0].magnitude = 42
            context.delete(quakes[1])
            let new = Quake(context: context)
            new.code = "new"
            let gone = Quake(context: context)
            context.delete(gone)
            (updated, deleted, inserted, insertedThenDeleted) = (quakes[0], quakes[1], new, gone)
        }
        // The perform block is over and nothing outside the context refers to the objects.
        XCTAssertNotNil(updated, "an updated object is kept until saved")
        XCTAssertNotNil(deleted, "a deleted object is kept until saved")
        XCTAssertNotNil(inserted, "an inserted object is kept until saved")
        XCTAssertNotNil(insertedThenDeleted, "an inserted-then-deleted object is kept until saved")
        try context.performAndWait {
            // The region is updated too: the delete took the quake out of its to-many.
            XCTAssertEqual(Set(context.updatedObjects.map(\.entity.name)), ["Quake", "Region"])
            XCTAssertEqual(context.deletedObjects.count, 1)
            XCTAssertEqual(context.insertedObjects.count, 1)
            try context.save()
        }
        XCTAssertNil(updated, "saved objects nobody holds are released")
        XCTAssertNil(deleted)
        XCTAssertNil(inserted)
        XCTAssertNil(insertedThenDeleted)
        let check = ManagedObjectContext(.privateQueue)
        check.persistentStoreCoordinator = coordinator
        try check.performAndWait {
            let codes = try check.fetch(FetchRequest<Quake>(entityName: "Quake")).map(\.code).sorted()
            XCTAssertEqual(codes, ["new", "q0", "q2", "q3", "q4", "q5"])
            let first = try check.fetch(FetchRequest<Quake>(entityName: "Quake")).first { $0.code == "q0" }
            XCTAssertEqual(first?.magnitude, 42)
        }
    }

    func testObjectsWhoseChangesAreUndoneAreReleasedLikeUnchangedOnes() throws {
        // Enough objects that the block's few registrations do not trigger a full sweep.
        let (coordinator, _) = try savedRegionWithQuakes(60)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        // Held across blocks, so they are no longer sweep candidates as fetched objects.
        var held: [Quake] = try context.performAndWait {
            try context.fetch(FetchRequest<Quake>(entityName: "Quake")).sorted { $0.code < $1.code }
        }
        context.performAndWait { _ = try? context.fetch(FetchRequest<Region>(entityName: "Region")) }
        weak var reverted: Quake?, undeleted: Quake?
        (reverted, undeleted) = (held[0], held[1])
        context.performAndWait {
            let old = held[0].magnitude
            held[0].magnitude = 77
            held[0].magnitude = old
            context.delete(held[1])
            context.insert(held[1])
            XCTAssertFalse(held[0].hasChanges)
            XCTAssertFalse(held[1].isDeleted)
            held.removeFirst(2)
            // The pending change notification holds changed objects until it is posted.
            context.processPendingChanges()
        }
        XCTAssertNil(reverted, "an object whose change was set back is released like an unchanged one")
        XCTAssertNil(undeleted, "an undeleted unchanged object is released like an unchanged one")
    }

    func testUnchangedObjectsAreNotKeptAliveByTheContext() throws {
        let (coordinator, _) = try savedRegionWithQuakes(50)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        weak var weakQuake: Quake?
        weak var keptQuake: Quake?
        var kept: Quake?
        try context.performAndWait {
            let quakes = try context.fetch(FetchRequest<Quake>(entityName: "Quake"))
            XCTAssertEqual(quakes.count, 50)
            weakQuake = quakes[0]
            kept = quakes[1]
            keptQuake = quakes[1]
            _ = quakes[0].magnitude
        }
        // As in an autorelease pool on Darwin: released once the block that dropped them ended.
        XCTAssertNil(weakQuake, "the context does not keep unchanged objects nothing else references")
        XCTAssertNotNil(keptQuake, "an object the caller holds stays registered")
        try context.performAndWait {
            XCTAssertEqual(context.registeredObjects.count, 1, "registeredObjects: objects in use or changed")
            XCTAssertTrue(context.registeredObject(for: kept!.objectID) === kept)
            let changed = try context.fetch(FetchRequest<Quake>(entityName: "Quake"))[5]
            changed.magnitude = 99
            weakQuake = changed
        }
        XCTAssertNotNil(weakQuake, "changed objects are kept until saved")
        try context.performAndWait {
            XCTAssertEqual(context.updatedObjects.count, 1)
            try context.save()
        }
        XCTAssertNil(weakQuake, "once saved, an unreferenced object is released")
        kept = nil
        context.performAndWait { XCTAssertEqual(context.registeredObjects.count, 0) }
        XCTAssertNil(keptQuake, "an object the caller stopped holding is released by the next full sweep")
    }

    /// Without blocks (a main-queue context used directly), unused objects are released when the
    /// registry has doubled: the number of dead objects stays bounded.
    func testUnusedObjectsAreReleasedWhenTheRegistryGrows() throws {
        let (coordinator, _) = try savedRegionWithQuakes(3_000)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        try context.performAndWait {
            let ids = try context.fetch(FetchRequest<ManagedObjectID>(entityName: "Quake"))
            let baseline = ManagedObject.liveInstanceCount
            var peak = 0
            for id in ids {
                _ = (context.object(with: id) as! Quake).magnitude
                peak = max(peak, ManagedObject.liveInstanceCount - baseline)
            }
            XCTAssertLessThanOrEqual(peak, 2_100, "dead objects are swept once the registry doubles")
            XCTAssertEqual(context.registeredObjects.count, 0)
            XCTAssertLessThanOrEqual(ManagedObject.liveInstanceCount - baseline, 0)
        }
    }

    /// Objects a save deletes, updates or inserts are released once the context lets go of them
    /// (after `reset()`): nothing of the save (change sets, notification sets) keeps them.
    func testSavedAndDeletedObjectsAreReleasedAfterReset() throws {
        let (coordinator, _) = try savedRegionWithQuakes(500)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        let baseline = ManagedObject.liveInstanceCount     // starts counting
        try context.performAndWait {
            let quakes = try context.fetch(FetchRequest<Quake>(entityName: "Quake"))
            for quake in quakes.prefix(200) { context.delete(quake) }
            for quake in quakes.suffix(200) { quake.magnitude += 1 }
            for index in 0..<100 { Quake(context: context).code = "new\(index)" }
            try context.save()
            context.reset()
        }
        XCTAssertLessThanOrEqual(ManagedObject.liveInstanceCount - baseline, 0, "every object is released")
    }
}
