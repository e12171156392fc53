import XCTest
import Strata

/// save(): validation collected into one error, delete rules, derived attributes, constraints.
final class SaveTests: XCTestCase {
    /// A model with validation rules on Quake.
    private func validatedModel() -> ManagedObjectModel {
        let magnitude = AttributeDescription(name: "magnitude", type: .double)
        magnitude.isOptional = false
        magnitude.minValue = 0
        magnitude.maxValue = 10
        let code = AttributeDescription(name: "code", type: .string)
        code.isOptional = false
        code.regularExpression = "[a-z]{2}[0-9]+"
        let place = AttributeDescription(name: "place", type: .string)
        place.maxLength = 10
        let quake = EntityDescription(name: "Quake", properties: [magnitude, code, place])
        let region = EntityDescription(name: "Region", properties: [AttributeDescription(name: "name", type: .string)])
        let quakes = RelationshipDescription(name: "quakes", destination: quake, toMany: true)
        quakes.minCount = 1
        quakes.maxCount = 2
        quakes.isOptional = false
        let back = RelationshipDescription(name: "region", destination: region)
        quakes.inverseRelationship = back
        back.inverseRelationship = quakes
        region.properties.append(quakes)
        quake.properties.append(back)
        return ManagedObjectModel(entities: [quake, region])
    }

    func testAllValidationErrorsOfASaveAreListedAndNothingIsWritten() throws {
        let (coordinator, context) = try TestModels.stack(validatedModel())
        try context.performAndWait {
            let bad = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Quake"]!, insertInto: context)
            bad.setValue(11.5, forKey: "magnitude")
            bad.setValue("XX", forKey: "code")
            bad.setValue("far too long a place", forKey: "place")
            let region = ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Region"]!, insertInto: context)
            region.setValue("empty", forKey: "name")
            XCTAssertThrowsError(try context.save()) { error in
                let error = error as! StrataError
                XCTAssertEqual(error.code, .validation)
                let messages = error.details.map(\.message).joined(separator: "\n")
                XCTAssertEqual(error.details.count, 4, messages)
                XCTAssertTrue(messages.contains("Quake.magnitude"), messages)
                XCTAssertTrue(messages.contains("above the maximum"), messages)
                XCTAssertTrue(messages.contains("Quake.code"), messages)
                XCTAssertTrue(messages.contains("Quake.place has length 20"), messages)
                XCTAssertTrue(messages.contains("Region.quakes has 0 objects"), messages)
            }
            XCTAssertTrue(context.hasChanges, "a failed save keeps the changes")
        }
        let other = ManagedObjectContext(.privateQueue)
        other.persistentStoreCoordinator = coordinator
        XCTAssertEqual(try other.performAndWait { try other.count(for: FetchRequest<ManagedObject>(entityName: "Quake")) }, 0)
    }

    /// A pattern must match the whole value (compiled once when the model freezes, anchored).
    func testPatternMatchesWholeValuesOnly() throws {
        let (_, context) = try TestModels.stack(validatedModel())
        try context.performAndWait {
            let entity = context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Quake"]!
            for (code, valid) in [("ab12", true), ("ab12x", false), ("xab12", false), ("a12", false), ("zz0", true)] {
                let quake = ManagedObject(entity: entity, insertInto: context)
                quake.setValue(1.0, forKey: "magnitude")
                quake.setValue(code, forKey: "code")
                if valid {
                    XCTAssertNoThrow(try context.save(), code)
                } else {
                    XCTAssertThrowsError(try context.save(), code)
                    context.rollback()
                }
            }
        }
    }

    func testRequiredAttributeWithoutValueFailsAndFixedObjectSaves() throws {
        let (_, context) = try TestModels.stack(validatedModel())
        try context.performAndWait {
            let model = context.persistentStoreCoordinator!.managedObjectModel
            let quake = ManagedObject(entity: model.entitiesByName["Quake"]!, insertInto: context)
            let region = ManagedObject(entity: model.entitiesByName["Region"]!, insertInto: context)
            try quake.setCheckedValue(region, forKey: "region")
            XCTAssertThrowsError(try context.save()) { error in
                let details = (error as! StrataError).details.map(\.message)
                XCTAssertEqual(details.count, 2, "\(details)")
                XCTAssertTrue(details.contains { $0.contains("Quake.magnitude is required") })
                XCTAssertTrue(details.contains { $0.contains("Quake.code is required") })
            }
            quake.setValue(3.0, forKey: "magnitude")
            quake.setValue("ab12", forKey: "code")
            try context.save()
            XCTAssertFalse(context.hasChanges)
        }
    }

    func testCascadeDeletesAttachmentsAndTheirImageData() throws {
        let (coordinator, context) = try TestModels.stack(TestModels.posts())
        try context.performAndWait {
            let post = Post(context: context)
            post.title = "cascade"
            let attachment = Attachment(context: context)
            attachment.identifier = "a1"
            attachment.post = post
            let image = ImageData(context: context)
            image.attachment = attachment
            XCTAssertTrue(attachment.imageData === image)
            try context.save()
            context.delete(post)
            XCTAssertTrue(attachment.isDeleted)
            XCTAssertTrue(image.isDeleted)
            try context.save()
        }
        let fresh = ManagedObjectContext(.privateQueue)
        fresh.persistentStoreCoordinator = coordinator
        try fresh.performAndWait {
            for entity in ["Post", "Attachment", "ImageData"] {
                XCTAssertEqual(try fresh.count(for: FetchRequest<ManagedObject>(entityName: entity)), 0, entity)
            }
        }
    }

    func testNullifyRemovesTheDeletedObjectFromInverses() throws {
        let (_, context) = try TestModels.stack(TestModels.posts())
        try context.performAndWait {
            let post = Post(context: context)
            let swift = Tag(context: context); swift.name = "swift"
            post.tags = [swift]
            XCTAssertEqual(swift.posts, [post])
            try context.save()
            context.delete(post)
            XCTAssertEqual(swift.posts, [])
            try context.save()
            XCTAssertEqual(swift.value(forKey: "postCount") as? Int64, 0)
        }
    }

    func testDenyRuleFailsTheSaveNamingTheObjects() throws {
        let model = try TestModels.earthquakes()
        model.entitiesByName["Region"]!.relationshipsByName["quakes"]!.deleteRule = .denyDeleteRule
        let (_, context) = try TestModels.stack(model)
        try context.performAndWait {
            let region = Region(context: context); region.name = "Pacific"
            let quake = Quake(context: context); quake.code = "q1"
            quake.region = region
            try context.save()
            context.delete(region)
            XCTAssertThrowsError(try context.save()) { error in
                let error = error as! StrataError
                XCTAssertEqual(error.code, .validation)
                XCTAssertTrue(error.message.contains("Region.quakes"), error.message)
                XCTAssertTrue(error.message.contains(quake.objectID.description), error.message)
            }
            context.rollback()
            XCTAssertFalse(region.isDeleted)
            context.delete(quake)
            context.delete(region)
            try context.save()
        }
    }

    func testDerivedPostCountFollowsTheToMany() throws {
        let (_, context) = try TestModels.stack(TestModels.posts())
        try context.performAndWait {
            let tag = Tag(context: context); tag.name = "db"
            let posts = (0..<3).map { i -> Post in let p = Post(context: context); p.title = "p\(i)"; return p }
            tag.posts = Set(posts)
            try context.save()
            XCTAssertEqual(tag.value(forKey: "postCount") as? Int64, 3)
            posts[0].tags = []
            try context.save()
            XCTAssertEqual(tag.value(forKey: "postCount") as? Int64, 2)
            XCTAssertThrowsError(try tag.setCheckedValue(5, forKey: "postCount"))
        }
    }

    func testOtherDerivationsLowercaseCanonicalKeyPathAggregatesAndNow() throws {
        let title = AttributeDescription(name: "title", type: .string)
        let rating = AttributeDescription(name: "rating", type: .double)
        let post = EntityDescription(name: "Post", properties: [title, rating])
        let blog = EntityDescription(name: "Blog", properties: [AttributeDescription(name: "name", type: .string)])
        let posts = RelationshipDescription(name: "posts", destination: post, toMany: true)
        let owner = RelationshipDescription(name: "blog", destination: blog)
        posts.inverseRelationship = owner
        owner.inverseRelationship = posts
        blog.properties += [posts,
            DerivedAttributeDescription(name: "total", type: .double, derivationExpression: "posts.@sum.rating"),
            DerivedAttributeDescription(name: "best", type: .double, derivationExpression: "posts.rating.@max"),
            DerivedAttributeDescription(name: "mean", type: .double, derivationExpression: "posts.@avg.rating"),
            DerivedAttributeDescription(name: "touched", type: .date, derivationExpression: "now()")]
        post.properties += [owner,
            DerivedAttributeDescription(name: "lower", type: .string, derivationExpression: "lowercase:(title)"),
            DerivedAttributeDescription(name: "folded", type: .string, derivationExpression: "canonical:(title)"),
            DerivedAttributeDescription(name: "blogName", type: .string, derivationExpression: "blog.name")]
        let (_, context) = try TestModels.stack(ManagedObjectModel(entities: [post, blog]))
        try context.performAndWait {
            let b = ManagedObject(entity: blog, insertInto: context)
            b.setValue("Notes", forKey: "name")
            for (text, score) in [("Crème Brûlée", 2.0), ("ABC", 4.0)] {
                let p = ManagedObject(entity: post, insertInto: context)
                p.setValue(text, forKey: "title")
                p.setValue(score, forKey: "rating")
                p.setValue(b, forKey: "blog")
            }
            let before = Date()
            try context.save()
            XCTAssertEqual(b.value(forKey: "total") as? Double, 6)
            XCTAssertEqual(b.value(forKey: "best") as? Double, 4)
            XCTAssertEqual(b.value(forKey: "mean") as? Double, 3)
            XCTAssertGreaterThanOrEqual((b.value(forKey: "touched") as? Date) ?? .distantPast, before.addingTimeInterval(-1))
            let first = (b.value(forKey: "posts") as! Set<ManagedObject>).first { ($0.value(forKey: "rating") as? Double) == 2 }!
            XCTAssertEqual(first.value(forKey: "lower") as? String, "crème brûlée")
            XCTAssertEqual(first.value(forKey: "folded") as? String, "creme brulee")
            XCTAssertEqual(first.value(forKey: "blogName") as? String, "Notes")
            first.setValue(10.0, forKey: "rating")
            try context.save()
            XCTAssertEqual(b.value(forKey: "total") as? Double, 14, "aggregates follow a change of a member's attribute")
        }
    }

    func testUniquenessConstraintConflictIsReported() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let first = Quake(context: context); first.code = "ci123"
            try context.save()
            let second = Quake(context: context); second.code = "ci123"
            XCTAssertThrowsError(try context.save()) { error in
                let error = error as! StrataError
                XCTAssertEqual(error.code, .constraintConflict)
                XCTAssertTrue(error.message.contains("code"), error.message)
                XCTAssertTrue(error.message.contains("ci123"), error.message)
            }
            second.code = "ci124"
            try context.save()
            _ = first
        }
    }

    func testObjectsAWillSaveHookChangesAreSavedToo() throws {
        let model = try ManagedObjectModel(classes: [Tally.self])
        let (coordinator, context) = try TestModels.stack(model)
        let ids: [ManagedObjectID] = try context.performAndWait {
            let tallies = (0..<40).map { i in
                let tally = Tally(context: context)
                tally.name = "t\(i)"
                return tally
            }
            try context.save()
            // One changed object whose willSave touches an unchanged one (and a third changed one
            // after it in key order, so the save's order of updates must be taken again).
            tallies[10].count = 1
            tallies[30].count = 1
            tallies[10].bumps = tallies[20]
            try context.save()
            XCTAssertFalse(tallies[20].hasChanges, "the object the hook changed was saved")
            return tallies.map(\.objectID)
        }
        let other = ManagedObjectContext(.privateQueue)
        other.persistentStoreCoordinator = coordinator
        try other.performAndWait {
            let stored = try ids.map { try XCTUnwrap(other.existingObject(with: $0) as? Tally) }
            XCTAssertEqual(stored.map(\.count), (0..<40).map { [10, 30].contains($0) ? 1 : 0 })
            XCTAssertEqual(stored.map(\.touched), (0..<40).map { $0 == 20 ? 1 : 0 })
        }
    }

    func testLifecycleHooksRunInOrder() throws {
        Post.hookLog = []
        let (coordinator, context) = try TestModels.stack(TestModels.posts())
        let id: ManagedObjectID = try context.performAndWait {
            let post = Post(context: context)
            post.title = "hooks"
            try context.save()
            return post.objectID
        }
        XCTAssertEqual(Post.hookLog, ["awakeFromInsert ", "willSave hooks", "didSave hooks"])
        Post.hookLog = []
        let other = ManagedObjectContext(.privateQueue)
        other.persistentStoreCoordinator = coordinator
        try other.performAndWait {
            let post = other.object(with: id) as! Post
            XCTAssertTrue(post.isFault)
            XCTAssertEqual(post.title, "hooks")
            other.delete(post)
            try other.save()
        }
        XCTAssertEqual(Post.hookLog, ["awakeFromFetch hooks", "prepareForDeletion hooks", "willSave hooks", "didSave hooks"])
    }
}

/// An object whose willSave changes another (set in `bumps`, not a modelled property).
final class Tally: ManagedObject {
    @Managed var name: String = ""
    @Managed var count: Int = 0
    @Managed var touched: Int = 0
    var bumps: Tally?

    override func willSave() {
        guard let other = bumps else { return }
        bumps = nil
        other.touched += 1
    }
}

/// Relating objects to an object deleted earlier in the same context: the deleted object's delete
/// rules apply to those relations when changes are processed (as Core Data propagates deletes),
/// so no saved row refers to a deleted one, on every store type.
final class DeleteThenRelateTests: XCTestCase {
    private func stack(_ type: StoreType, _ rule: DeleteRule) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let model = try TestModels.earthquakes()
        model.entitiesByName["Region"]!.relationshipsByName["quakes"]!.deleteRule = rule
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let url = type == .native ? TestStores.freshFile("delete-then-relate") : URL(fileURLWithPath: "/dev/null/delete-then-relate-\(UUID())")
        _ = try coordinator.addPersistentStore(type: type, configuration: nil, at: url, options: nil)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }

    /// Each stored quake's code with its region's name ("-" for none), and the number of regions.
    private func quakesAndRegions(_ coordinator: PersistentStoreCoordinator) throws -> (quakes: [String: String], regions: Int) {
        let fresh = ManagedObjectContext(.privateQueue)
        fresh.persistentStoreCoordinator = coordinator
        return try fresh.performAndWait {
            let quakes = try fresh.fetch(FetchRequest<Quake>(entityName: "Quake"))
            let regions = try fresh.count(for: FetchRequest<Region>(entityName: "Region"))
            return (Dictionary(uniqueKeysWithValues: quakes.map { ($0.code, $0.region?.name ?? "-") }), regions)
        }
    }

    func testNullifyLetsGoOfObjectsRelatedAfterTheDelete() throws {
        for type in [StoreType.native, .inMemory] {
            let (coordinator, context) = try stack(type, .nullifyDeleteRule)
            try context.performAndWait {
                let region = Region(context: context); region.name = "Pacific"
                let kept = Region(context: context); kept.name = "Atlantic"
                let old = Quake(context: context); old.code = "old"; old.region = region
                try context.save()
                context.delete(region)
                XCTAssertNil(old.region)
                // After the delete: a new quake and an old one point at the deleted region, and
                // the deleted region is given a third.
                let new = Quake(context: context); new.code = "new"; new.region = region
                let other = Quake(context: context); other.code = "other"; other.region = kept
                region.mutableSetValue(forKey: "quakes").add(other)
                old.region = region
                try context.save()
                XCTAssertNil(new.region, "\(type)")
                XCTAssertNil(old.region, "\(type)")
                XCTAssertNil(other.region, "\(type)")
            }
            let stored = try quakesAndRegions(coordinator)
            XCTAssertEqual(stored.quakes, ["old": "-", "new": "-", "other": "-"], "\(type)")
            XCTAssertEqual(stored.regions, 1, "\(type)")
        }
    }

    func testCascadeDeletesObjectsRelatedAfterTheDelete() throws {
        for type in [StoreType.native, .inMemory] {
            let (coordinator, context) = try stack(type, .cascadeDeleteRule)
            try context.performAndWait {
                let region = Region(context: context); region.name = "Pacific"
                let kept = Quake(context: context); kept.code = "kept"
                try context.save()
                context.delete(region)
                let new = Quake(context: context); new.code = "new"; new.region = region
                kept.region = region
                try context.save()
                XCTAssertTrue(kept.isDeleted || kept.managedObjectContext == nil, "\(type)")
                XCTAssertNil(new.managedObjectContext, "\(type): the inserted quake went with the region")
            }
            let stored = try quakesAndRegions(coordinator)
            XCTAssertEqual(stored.quakes.count, 0, "\(type)")
            XCTAssertEqual(stored.regions, 0, "\(type)")
        }
    }

    func testDenyRefusesTheSaveForObjectsRelatedAfterTheDelete() throws {
        for type in [StoreType.native, .inMemory] {
            let (coordinator, context) = try stack(type, .denyDeleteRule)
            try context.performAndWait {
                let region = Region(context: context); region.name = "Pacific"
                try context.save()
                context.delete(region)
                let new = Quake(context: context); new.code = "new"; new.region = region
                XCTAssertThrowsError(try context.save(), "\(type)") { error in
                    XCTAssertEqual((error as? StrataError)?.code, .validation, "\(type): \(error)")
                    XCTAssertTrue("\(error)".contains(new.objectID.description), "\(type): \(error)")
                }
            }
            XCTAssertEqual(try quakesAndRegions(coordinator).regions, 1, "\(type)")
        }
    }

    /// With "no action" nothing lets go of the deleted object: a save that writes an object
    /// referring to it names the dangling reference instead of writing a row that refers to
    /// nothing. (Objects the save does not write are the app's business, as in Core Data.)
    func testNoActionLeavesADanglingReferenceTheSaveRefuses() throws {
        for type in [StoreType.native, .inMemory] {
            let (coordinator, context) = try stack(type, .noActionDeleteRule)
            try context.performAndWait {
                let region = Region(context: context); region.name = "Pacific"
                try context.save()
                context.delete(region)
                let quake = Quake(context: context); quake.code = "q"; quake.region = region
                XCTAssertThrowsError(try context.save(), "\(type)") { error in
                    XCTAssertEqual((error as? StrataError)?.code, .validation, "\(type): \(error)")
                    XCTAssertTrue("\(error)".contains("Quake.region refers to \(region.objectID)"), "\(type): \(error)")
                }
                quake.region = nil
                try context.save()
            }
            let stored = try quakesAndRegions(coordinator)
            XCTAssertEqual(stored.quakes, ["q": "-"], "\(type)")
            XCTAssertEqual(stored.regions, 0, "\(type)")
        }
    }
}
