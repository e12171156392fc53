import XCTest
import Foundation
@testable import Strata
@testable import StrataGraph
@_spi(StrataInternal) import StrataCore

// Classes of their own: what a class declares is recorded once per class, so these must not be
// shared with tests that would record them first.
class DeclaredBase: ManagedObject {
    @Managed var label: String = "base label"
    @Managed var rank: Int64 = 7
}

class DeclaredMiddle: DeclaredBase {
    @Managed var note: String? = nil
    @Managed var weight: Double = 2.5
}

final class DeclaredLeaf: DeclaredMiddle {
    @Managed var tag: String = "leaf tag"
    @Managed(inverse: \DeclaredOwner.leaves) var owner: DeclaredOwner?
}

final class DeclaredOwner: ManagedObject {
    @Managed var name: String = "owner"
    @Managed var leaves: Set<DeclaredLeaf> = []
}

/// `@Managed` wrappers store one byte: what each property declares (its initial value and
/// inverse) is recorded once per class, from a prototype, and must come out exactly as declared,
/// property by property, through class hierarchies.
final class ManagedDeclarationsTests: XCTestCase {
    func testAWrapperIsOneByteWhateverItsValue() {
        XCTAssertEqual(MemoryLayout<Managed<String>>.size, 1)
        XCTAssertEqual(MemoryLayout<Managed<Double>>.size, 1)
        XCTAssertEqual(MemoryLayout<Managed<Set<DeclaredLeaf>>>.size, 1)
        XCTAssertEqual(MemoryLayout<Managed<DeclaredOwner?>>.size, 1)
    }

    func testEachPropertyGetsItsOwnInitialValueAndInverseThroughAHierarchy() throws {
        // The base classes are not listed, so the leaf's entity has their properties too.
        let model = try ManagedObjectModel(classes: [DeclaredLeaf.self, DeclaredOwner.self])
        let leaf = model.entitiesByName["DeclaredLeaf"]!
        XCTAssertEqual(Set(leaf.attributesByName.keys), ["label", "rank", "note", "weight", "tag"])
        XCTAssertEqual(leaf.attributesByName["label"]?.defaultValue as? String, "base label")
        XCTAssertEqual(leaf.attributesByName["rank"]?.defaultValue as? Int64, 7)
        XCTAssertNil(leaf.attributesByName["note"]?.defaultValue)
        XCTAssertEqual(leaf.attributesByName["weight"]?.defaultValue as? Double, 2.5)
        XCTAssertEqual(leaf.attributesByName["tag"]?.defaultValue as? String, "leaf tag")
        XCTAssertEqual(leaf.relationshipsByName["owner"]?.inverseRelationship?.name, "leaves")
        XCTAssertEqual(model.entitiesByName["DeclaredOwner"]!.relationshipsByName["leaves"]?.inverseRelationship?.name, "owner")

        // Every property reads and writes its own slot (the wrappers' key paths are distinct).
        let (_, context) = try TestModels.stack(model)
        try context.performAndWait {
            let object = DeclaredLeaf(context: context)
            XCTAssertEqual(object.label, "base label")
            XCTAssertEqual(object.rank, 7)
            XCTAssertEqual(object.tag, "leaf tag")
            XCTAssertEqual(object.weight, 2.5)
            object.label = "a"; object.rank = 1; object.note = "b"; object.weight = 3; object.tag = "c"
            let owner = DeclaredOwner(context: context)
            object.owner = owner
            try context.save()
            context.reset()
            let fetched = try context.fetch(FetchRequest<DeclaredLeaf>(entityName: "DeclaredLeaf"))
            XCTAssertEqual(fetched.count, 1)
            let read = fetched[0]
            XCTAssertEqual([read.label, read.note ?? "-", read.tag], ["a", "b", "c"])
            XCTAssertEqual(read.rank, 1)
            XCTAssertEqual(read.weight, 3)
            XCTAssertEqual(read.owner?.name, "owner")
            XCTAssertEqual(read.owner?.leaves.count, 1)
        }
    }

    func testANullValueOfANonOptionalPropertyReadsAsItsDeclaredInitialValue() throws {
        let model = try ManagedObjectModel(classes: [DeclaredLeaf.self, DeclaredOwner.self])
        // Without a model default the row holds null: the typed read falls back to the class's
        // declared initial value, recorded once per class.
        model.entitiesByName["DeclaredOwner"]!.attributesByName["name"]!.defaultValue = nil
        let (_, context) = try TestModels.stack(model)
        context.performAndWait {
            let owner = DeclaredOwner(context: context)
            XCTAssertNil(owner.value(forKey: "name"))
            XCTAssertEqual(owner.name, "owner")
        }
    }

    func testRecordingOnOneThreadIgnoresObjectsMadeOnOthers() throws {
        // Models are built (recording prototypes) while other threads make objects of other
        // classes with wrappers: no thread's recording may pick up another's wrappers.
        let model = try ManagedObjectModel(classes: [Station.self, Reading.self])
        let (_, context) = try TestModels.stack(model)
        let failures = Lock<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            if worker % 2 == 0 {
                for _ in 0..<50 {
                    let object = DeclaredLeaf(entity: EntityDescription(), insertInto: nil)
                    withExtendedLifetime(object) {}
                }
            } else {
                for _ in 0..<50 {
                    do {
                        let table = try ManagedDeclarations.recordDeclarations(of: Station.self).get()
                        if table.count != 11 || table["name"]?.initialValue as? String != "" {
                            failures.withLock { $0.append("Station recorded \(table.count) declarations") }
                        }
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        withExtendedLifetime(context) {}
    }
}
