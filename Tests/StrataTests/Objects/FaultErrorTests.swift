// FaultErrorTests: a fault that cannot be fulfilled never crashes. On a native store over the
// fault-injecting file system, an I/O error or a corrupt page while a fault fires leaves the
// object unreadable with its defaults: typed getters and value(forKey:) return the defaults,
// checkedValue throws the error, the context keeps it in faultErrors, a save that would write
// the object is refused, and a refresh reads the object again once the file is sound. A missing
// row follows Core Data's shouldDeleteInaccessibleFaults.

import Foundation
@testable import Strata
@testable import StrataGraph
import StrataStorage
import XCTest
import _StrataTestSupport

final class FaultErrorTests: XCTestCase {
    /// A store in `fs` with `count` quakes (magnitude = index + 1), closed again; their IDs.
    private func savedStore(_ fs: MemoryFileSystem, at url: URL, count: Int) throws -> [ManagedObjectID] {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        let store = try coordinator.addPersistentStore(type: .native, at: url, options: [FileSystemOptionKey: fs])
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        let ids = try context.performAndWait {
            let quakes = (0..<count).map { index in
                let quake = Quake(context: context)
                quake.code = "c\(index)"
                quake.magnitude = Double(index + 1)
                return quake
            }
            try context.save()
            return quakes.map(\.objectID)
        }
        try coordinator.remove(store)
        return ids
    }

    /// The store reopened (a new engine: nothing cached) and a context on it.
    private func reopened(_ fs: MemoryFileSystem, at url: URL) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try coordinator.addPersistentStore(type: .native, at: url, options: [FileSystemOptionKey: fs])
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        return (coordinator, context)
    }

    private func freshURL() -> URL { URL(fileURLWithPath: "/memory/faults-\(UUID().uuidString).strata") }

    /// Every access path of an unreadable object, then recovery by refresh.
    private func assertUnreadable(_ quake: Quake, in context: ManagedObjectContext, code: StrataError.Code,
                                  recover: () -> Void, expected magnitude: Double, line: UInt = #line) {
        XCTAssertEqual(quake.magnitude, 0, "a typed getter reads the default", line: line)
        XCTAssertEqual(quake.code, "", line: line)
        XCTAssertNil(quake.region, line: line)
        XCTAssertEqual(quake.value(forKey: "place") as? String, "", "value(forKey:) reads the default", line: line)
        XCTAssertFalse(quake.isFault, line: line)
        XCTAssertEqual(context.faultErrors[quake.objectID]?.code, code, "the context keeps the error", line: line)
        XCTAssertThrowsError(try quake.checkedValue(forKey: "magnitude"), line: line) { error in
            XCTAssertEqual((error as? StrataError)?.code, code, line: line)
        }
        quake.magnitude = 7   // set on the defaults; the save must not write them
        XCTAssertThrowsError(try context.save(), "a save that would write defaults over the row is refused", line: line) { error in
            XCTAssertEqual((error as? StrataError)?.code, code, line: line)
            XCTAssertTrue("\(error)".contains("could not be read"), "\(error)", line: line)
        }
        context.rollback()
        XCTAssertEqual(quake.magnitude, 0, "a rollback restores the defaults", line: line)
        XCTAssertFalse(context.hasChanges, line: line)
        XCTAssertEqual(context.faultErrors[quake.objectID]?.code, code, "and keeps the error", line: line)
        recover()
        context.refresh(quake, mergeChanges: false)
        XCTAssertNil(context.faultErrors[quake.objectID], "refresh forgets the error", line: line)
        XCTAssertEqual(quake.magnitude, magnitude, "and the row is read again", line: line)
        XCTAssertFalse(context.hasChanges, line: line)
    }

    func testAnIOErrorWhileAFaultFiresLeavesDefaultsAndReportsIt() throws {
        let fs = MemoryFileSystem(), url = freshURL()
        let ids = try savedStore(fs, at: url, count: 3)
        let (_, context) = try reopened(fs, at: url)
        try context.performAndWait {
            let quake = try XCTUnwrap(context.object(with: ids[1]) as? Quake)
            fs.inject(.init(.read, persistent: true))
            assertUnreadable(quake, in: context, code: .io, recover: { fs.clearFaults() }, expected: 2)
            // Other objects were never touched by the failure.
            XCTAssertEqual((context.object(with: ids[2]) as? Quake)?.magnitude, 3)
            XCTAssertTrue(context.faultErrors.isEmpty)
        }
    }

    func testACorruptPageWhileAFaultFiresLeavesDefaultsAndReportsIt() throws {
        let fs = MemoryFileSystem(), url = freshURL()
        let ids = try savedStore(fs, at: url, count: 3)
        let (coordinator, context) = try reopened(fs, at: url)
        // Closing the first store checkpointed every commit into the store file. Garble every
        // page after the first two: the rows' pages are read (and checked) only when a fault fires.
        let sound = try XCTUnwrap(fs.contents(of: url.path))
        var garbled = sound
        for index in (2 * 4096)..<garbled.count { garbled[index] ^= 0x5A }
        fs.setContents(of: url.path, garbled)
        try context.performAndWait {
            let quake = try XCTUnwrap(context.object(with: ids[0]) as? Quake)
            assertUnreadable(quake, in: context, code: .corrupt, recover: { fs.setContents(of: url.path, sound) }, expected: 1)
        }
        withExtendedLifetime(coordinator) {}
    }

    func testAMissingRowFollowsShouldDeleteInaccessibleFaults() throws {
        let fs = MemoryFileSystem(), url = freshURL()
        let ids = try savedStore(fs, at: url, count: 2)
        let (coordinator, context) = try reopened(fs, at: url)
        let other = ManagedObjectContext(.privateQueue)
        other.persistentStoreCoordinator = coordinator
        try other.performAndWait {
            other.delete(other.object(with: ids[0]))
            other.delete(other.object(with: ids[1]))
            try other.save()
        }
        try context.performAndWait {
            let deletedQuietly = context.object(with: ids[0]) as! Quake
            XCTAssertEqual(deletedQuietly.magnitude, 0)
            XCTAssertTrue(deletedQuietly.isDeleted, "Core Data's default: the object becomes deleted")
            XCTAssertTrue(context.faultErrors.isEmpty)

            context.shouldDeleteInaccessibleFaults = false
            let reported = context.object(with: ids[1]) as! Quake
            XCTAssertEqual(reported.magnitude, 0, "no trap: the defaults")
            XCTAssertFalse(reported.isDeleted)
            XCTAssertEqual(context.faultErrors[ids[1]]?.code, .objectNotFound)
            XCTAssertThrowsError(try reported.checkedValue(forKey: "magnitude"))
        }
    }

    func testResetForgetsFaultErrors() throws {
        let fs = MemoryFileSystem(), url = freshURL()
        let ids = try savedStore(fs, at: url, count: 1)
        let (_, context) = try reopened(fs, at: url)
        context.performAndWait {
            fs.inject(.init(.read, persistent: true))
            XCTAssertEqual((context.object(with: ids[0]) as? Quake)?.magnitude, 0)
            XCTAssertEqual(context.faultErrors.count, 1)
            fs.clearFaults()
            context.reset()
            XCTAssertTrue(context.faultErrors.isEmpty)
            XCTAssertEqual((context.object(with: ids[0]) as? Quake)?.magnitude, 1)
        }
    }
}
