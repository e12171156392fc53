// CommittedValuesTests: an object's committed values (kept as the originals of its changed
// slots, ManagedObject+Committed.swift) stay what was last read or saved through every way its
// values change: attribute sets (back to the committed value too), to-many edits through
// inverses, saves, rollbacks, refreshes that merge a change made elsewhere. A seeded random walk
// is checked against an oracle after every step: committed values, changed keys, current values,
// and after each save what a fresh context reads.

import Foundation
@testable import Strata
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class CommittedValuesTests: XCTestCase {
    /// A quake's modelled state in the oracle.
    private struct QuakeState: Equatable {
        var magnitude: Double = 0
        var place = ""
        var depth: Double?
        var region: String?
    }

    func testCommittedValuesFollowTheOracleThroughRandomChanges() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let (coordinator, context) = try TestModels.stack(try TestModels.earthquakes())
        let outside = ManagedObjectContext(.privateQueue)
        outside.persistentStoreCoordinator = coordinator
        let codes = (0..<6).map { "c\($0)" }
        let regionNames = ["north", "south"]
        var saved: [String: QuakeState] = [:]
        var current: [String: QuakeState] = [:]
        // What the context last read or saved, per quake (differs from `saved` only between an
        // outside change and the refresh that follows it).
        var committed: [String: QuakeState] = [:]

        try context.performAndWait {
            var quakes: [String: Quake] = [:]
            var regions: [String: Region] = [:]
            for name in regionNames {
                let region = Region(context: context)
                region.name = name
                regions[name] = region
            }
            for code in codes {
                let quake = Quake(context: context)
                quake.code = code
                quakes[code] = quake
                current[code] = QuakeState()
            }
            try context.save()
            saved = current
            committed = current

            func check(_ step: Int, _ action: String) throws {
                let trace = "seed \(seed), step \(step) (\(action))"
                for code in codes {
                    let quake = quakes[code]!
                    let now = current[code]!, then = committed[code]!
                    XCTAssertEqual(quake.magnitude, now.magnitude, "\(code) magnitude, \(trace)")
                    XCTAssertEqual(quake.place, now.place, "\(code) place, \(trace)")
                    XCTAssertEqual(quake.depth, now.depth, "\(code) depth, \(trace)")
                    XCTAssertEqual(quake.region?.name, now.region, "\(code) region, \(trace)")
                    let stored = quake.committedValues(forKeys: nil)
                    XCTAssertEqual(stored["magnitude"] as? Double, then.magnitude, "\(code) committed magnitude, \(trace)")
                    XCTAssertEqual(stored["place"] as? String, then.place, "\(code) committed place, \(trace)")
                    XCTAssertEqual(stored["depth"] as? Double, then.depth, "\(code) committed depth, \(trace)")
                    XCTAssertEqual((stored["region"] as? ManagedObjectID).map { context.object(with: $0) as! Region }?.name,
                                   then.region, "\(code) committed region, \(trace)")
                    var changed: Set<String> = []
                    if now.magnitude != then.magnitude { changed.insert("magnitude") }
                    if now.place != then.place { changed.insert("place") }
                    if now.depth != then.depth { changed.insert("depth") }
                    if now.region != then.region { changed.insert("region") }
                    XCTAssertEqual(Set(quake.changedValues().keys), changed, "\(code) changed keys, \(trace)")
                }
                for name in regionNames {
                    let region = regions[name]!
                    let members = Set(codes.filter { current[$0]!.region == name })
                    let committedMembers = Set(codes.filter { committed[$0]!.region == name })
                    XCTAssertEqual(Set(region.quakes.map(\.code)), members, "\(name) quakes, \(trace)")
                    let stored = region.committedValues(forKeys: ["quakes"])["quakes"] as? Set<ManagedObjectID> ?? []
                    XCTAssertEqual(stored, Set(committedMembers.map { quakes[$0]!.objectID }), "\(name) committed quakes, \(trace)")
                    XCTAssertEqual(region.changedValues().keys.contains("quakes"), members != committedMembers, "\(name) changed, \(trace)")
                }
            }

            func checkStored(_ step: Int) throws {
                let reader = ManagedObjectContext(.privateQueue)
                reader.persistentStoreCoordinator = coordinator
                try reader.performAndWait {
                    let all = try reader.fetch(FetchRequest<Quake>(entityName: "Quake"))
                    for quake in all {
                        let state = QuakeState(magnitude: quake.magnitude, place: quake.place, depth: quake.depth, region: quake.region?.name)
                        XCTAssertEqual(state, saved[quake.code], "\(quake.code) as stored, seed \(seed), step \(step)")
                    }
                }
            }

            for step in 0..<iterations(400, stress: 4000) {
                let code = codes[random.next(below: codes.count)]
                let quake = quakes[code]!
                let action: String
                switch random.next(below: 10) {
                case 0, 1:
                    let value = Double(random.next(below: 3))
                    quake.magnitude = value
                    current[code]!.magnitude = value
                    action = "magnitude of \(code) = \(value)"
                case 2:
                    let value = ["", "a", "b"][random.next(below: 3)]
                    quake.place = value
                    current[code]!.place = value
                    action = "place of \(code) = \(value)"
                case 3:
                    let value: Double? = random.chance(0.3) ? nil : Double(random.next(below: 2))
                    quake.depth = value
                    current[code]!.depth = value
                    action = "depth of \(code) = \(value.map { "\($0)" } ?? "nil")"
                case 4, 5:
                    let name: String? = random.chance(0.3) ? nil : regionNames[random.next(below: regionNames.count)]
                    quake.region = name.map { regions[$0]! }
                    current[code]!.region = name
                    action = "region of \(code) = \(name ?? "nil")"
                case 6:
                    try context.save()
                    saved = current
                    committed = current
                    try checkStored(step)
                    action = "save"
                case 7:
                    context.rollback()
                    current = committed
                    action = "rollback"
                case 8:
                    // Another context changes the stored magnitude; a merging refresh takes it
                    // wherever this context has not changed the magnitude itself.
                    let value = Double(random.next(below: 3)) + 0.5
                    try outside.performAndWait {
                        let request = FetchRequest<Quake>(entityName: "Quake")
                        request.predicate = try FetchPredicate(format: "code == %@", code)
                        try outside.fetch(request).first!.magnitude = value
                        try outside.save()
                        outside.reset()
                    }
                    saved[code]!.magnitude = value
                    context.refresh(quake, mergeChanges: true)
                    if current[code]!.magnitude == committed[code]!.magnitude { current[code]!.magnitude = value }
                    committed[code] = saved[code]
                    action = "outside magnitude of \(code) = \(value), merged"
                default:
                    // A refresh with nothing changed is a no-op for the oracle; with changes it
                    // re-reads the committed values and keeps the changed ones.
                    context.refresh(quake, mergeChanges: true)
                    action = "refresh \(code)"
                }
                try check(step, action)
            }
        }
    }

    func testChangingAFetchedObjectKeepsOneOriginalNotACopyOfItsRow() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            for i in 0..<3 {
                let quake = Quake(context: context)
                quake.code = "q\(i)"
                quake.magnitude = Double(i)
            }
            try context.save()
            context.reset()
            let quakes = try context.fetch(FetchRequest<Quake>(entityName: "Quake"))
            for quake in quakes {
                _ = quake.magnitude
                XCTAssertEqual(quake.committedOriginals?.count, 0, "a fired fault's committed values are its values")
                quake.magnitude += 10
                quake.magnitude += 1
                XCTAssertEqual(quake.committedOriginals?.map(\.slot), [quake.entity.slotIndex["magnitude"]!],
                               "two changes of one slot keep its one original")
                quake.magnitude -= 11
                XCTAssertEqual(quake.committedOriginals?.count, 0, "back to the committed value: no original left")
                XCTAssertFalse(quake.hasChanges)
            }
        }
    }
}
