import XCTest
import Strata

/// Scale checks: the object layer's costs grow linearly (catches accidental quadratic paths).
/// The default run uses 20,000 objects; STRATA_STRESS=1 uses 200,000 and prints rates.
final class ObjectLayerScaleTests: XCTestCase {
    private var count: Int { ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 200_000 : 20_000 }

    func testInsertSaveFetchAndFireFaultsScaleLinearly() throws {
        let (coordinator, context) = try TestModels.stack(TestModels.earthquakes())
        let n = count
        var clock = ContinuousClock.now
        func lap(_ label: String) {
            let elapsed = ContinuousClock.now - clock
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" {
                print("\(label): \(Int(Double(n) / seconds)) objects/s")
            }
            clock = .now
        }
        try context.performAndWait {
            let regions = (0..<10).map { i -> Region in let r = Region(context: context); r.name = "r\(i)"; return r }
            for i in 0..<n {
                let quake = Quake(context: context)
                quake.code = "c\(i)"
                quake.magnitude = Double(i % 100) / 10
                quake.region = regions[i % 10]
            }
            lap("insert")
            try context.save()
            lap("save")
        }
        let reader = ManagedObjectContext(.privateQueue)
        reader.persistentStoreCoordinator = coordinator
        try reader.performAndWait {
            let quakes = try reader.fetch(FetchRequest<Quake>(entityName: "Quake"))
            XCTAssertEqual(quakes.count, n)
            lap("fetch")
            var total = 0.0
            for quake in quakes { total += quake.magnitude }
            XCTAssertGreaterThan(total, 0)
            lap("fire faults")
            let region = try reader.fetch(FetchRequest<Region>(entityName: "Region"))[0]
            XCTAssertEqual(region.quakes.count, n / 10)
            for quake in quakes.prefix(n / 2) { quake.magnitude += 1 }
            try reader.save()
            lap("update half + save")
        }
    }
}
