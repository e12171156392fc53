// ChangeTrackerTests: a context's inserted, updated and deleted objects against a naive oracle,
// under random sequences of inserts, changes (and changes back), deletes, re-inserts, saves,
// rollbacks, refreshes and resets; the tracker's invariants hold after every step, saves write
// inserts in insertion order, and the store holds exactly the oracle's committed values.

import Foundation
@testable import Strata
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class ChangeTrackerTests: XCTestCase {
    /// What the oracle knows of one object.
    private struct Expected {
        let object: Quake
        /// The saved magnitude (nil: never saved).
        var committed: Double?
        var current: Double
        var deleted = false
    }

    private enum Step: CaseIterable { case insert, change, changeBack, delete, reinsert, save, rollback, refresh, processPending, reset }

    func testPendingChangesFollowANaiveOracle() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        for round in 0..<iterations(12, stress: 200) {
            let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
            try context.performAndWait {
                try runRound(context, coordinator, steps: 120, random: &random, trace: "seed \(seed), round \(round)")
            }
        }
    }

    private func runRound(_ context: ManagedObjectContext, _ coordinator: PersistentStoreCoordinator, steps: Int,
                          random: inout SeededRandom, trace: String) throws {
        var model: [Expected] = []
        /// What the store holds: code → magnitude (a reset forgets objects, not rows).
        var stored: [String: Double] = [:]
        var nextCode = 0
        func live() -> [Int] { model.indices.filter { !model[$0].deleted } }
        func pick(_ indices: [Int]) -> Int? { indices.isEmpty ? nil : indices[random.next(below: indices.count)] }
        var log: [String] = []
        for _ in 0..<steps {
            let step = Step.allCases[random.next(below: Step.allCases.count)]
            log.append("\(step)")
            switch step {
            case .insert:
                let quake = Quake(context: context)
                quake.code = "q\(nextCode)"
                nextCode += 1
                quake.magnitude = Double(random.next(below: 5))
                model.append(Expected(object: quake, committed: nil, current: quake.magnitude))
            case .change:
                guard let index = pick(live()) else { continue }
                let value = Double(random.next(below: 5))
                model[index].object.magnitude = value
                model[index].current = value
            case .changeBack:
                guard let index = pick(live().filter { model[$0].committed != nil }) else { continue }
                model[index].object.magnitude = model[index].committed!
                model[index].current = model[index].committed!
            case .delete:
                guard let index = pick(live()) else { continue }
                context.delete(model[index].object)
                model[index].deleted = true
            case .reinsert:
                guard let index = pick(model.indices.filter { model[$0].deleted }) else { continue }
                context.insert(model[index].object)
                model[index].deleted = false
            case .save:
                let expectedInsertOrder = model.filter { $0.committed == nil && !$0.deleted }.map { ObjectIdentifier($0.object) }
                XCTAssertEqual(context.insertedInOrder().map(ObjectIdentifier.init), expectedInsertOrder, "insertion order, \(trace)")
                // didSave names exactly the saved objects (its sets may be objectsDidChange's own).
                let expected = (Set(expectedInsertOrder),
                                Set(model.filter { $0.committed != nil && !$0.deleted && $0.current != $0.committed }.map { ObjectIdentifier($0.object) }),
                                Set(model.filter { $0.committed != nil && $0.deleted }.map { ObjectIdentifier($0.object) }))
                let captured = CapturedInfo()
                let observer = NotificationCenter.default.addObserver(forName: ManagedObjectContext.didSaveObjectsNotification,
                                                                      object: context, queue: nil) { captured.store($0) }
                defer { NotificationCenter.default.removeObserver(observer) }
                try context.save()
                if !(expected.0.isEmpty && expected.1.isEmpty && expected.2.isEmpty) {
                    func posted(_ key: String) -> Set<ObjectIdentifier> { Set((captured.objects[key] ?? []).map(ObjectIdentifier.init)) }
                    XCTAssertEqual(posted("inserted"), expected.0, "didSave inserted, \(trace)")
                    XCTAssertEqual(posted("updated"), expected.1, "didSave updated, \(trace)")
                    XCTAssertEqual(posted("deleted"), expected.2, "didSave deleted, \(trace)")
                }
                for entry in model where entry.deleted { stored[entry.object.code] = nil }
                model.removeAll { $0.deleted }
                for index in model.indices {
                    model[index].committed = model[index].current
                    stored[model[index].object.code] = model[index].current
                }
                try assertStoreHolds(stored, coordinator, "\(trace), after \(log.joined(separator: " "))")
            case .rollback:
                context.rollback()
                model.removeAll { $0.committed == nil }
                for index in model.indices {
                    model[index].current = model[index].committed!
                    model[index].deleted = false
                }
            case .refresh:
                guard let index = pick(model.indices.filter { model[$0].committed != nil }) else { continue }
                context.refresh(model[index].object, mergeChanges: false)
                model[index].current = model[index].committed!
                model[index].deleted = false
            case .processPending:
                context.processPendingChanges()
            case .reset:
                context.reset()
                model = []
            }
            let where_ = "\(trace), after \(log.suffix(6).joined(separator: " "))"
            XCTAssertEqual(context.changeTracker.violations(handle: context.handle), [], where_)
            let inserted = Set(model.filter { $0.committed == nil && !$0.deleted }.map { ObjectIdentifier($0.object) })
            let updated = Set(model.filter { $0.committed != nil && !$0.deleted && $0.current != $0.committed }.map { ObjectIdentifier($0.object) })
            let deleted = Set(model.filter { $0.committed != nil && $0.deleted }.map { ObjectIdentifier($0.object) })
            XCTAssertEqual(Set(context.insertedObjects.map(ObjectIdentifier.init)), inserted, "inserted, \(where_)")
            XCTAssertEqual(Set(context.updatedObjects.map(ObjectIdentifier.init)), updated, "updated, \(where_)")
            XCTAssertEqual(Set(context.deletedObjects.map(ObjectIdentifier.init)), deleted, "deleted, \(where_)")
            XCTAssertEqual(context.hasChanges, !(inserted.isEmpty && updated.isEmpty && deleted.isEmpty), where_)
            for entry in model {
                XCTAssertEqual(entry.object.isDeleted, entry.deleted, where_)
                XCTAssertEqual(entry.object.isInserted, entry.committed == nil, where_)
                if !entry.deleted { XCTAssertEqual(entry.object.magnitude, entry.current, where_) }
            }
            if testRun?.failureCount ?? 0 > 0 { return }
        }
    }

    /// A fresh context fetches exactly the stored codes and magnitudes.
    private func assertStoreHolds(_ expected: [String: Double], _ coordinator: PersistentStoreCoordinator, _ trace: String) throws {
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        let stored = try reader.performAndWait {
            Dictionary(uniqueKeysWithValues: try reader.fetch(Quake.fetchRequest()).map { ($0.code, $0.magnitude) })
        }
        XCTAssertEqual(stored, expected, "store after save, \(trace)")
    }

    /// STRATA_CHECKS finds a broken invariant (a test that the check can fail).
    func testViolationsNameABrokenInvariant() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        context.performAndWait {
            let quake = Quake(context: context)
            XCTAssertEqual(context.changeTracker.violations(handle: context.handle), [])
            quake.state = .loaded   // an inserted object whose state says otherwise
            let found = context.changeTracker.violations(handle: context.handle)
            XCTAssertEqual(found.count, 1, "\(found)")
            XCTAssertTrue(found.first?.contains("is not an inserted object") ?? false, "\(found)")
            quake.state = .inserted
        }
    }
}
