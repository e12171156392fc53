// FetchResultTypingTests: fetch results are typed by their class (the managed-object overload of
// `fetch`) or by a checked cast (the general one): objects of exactly the requested class,
// subclasses of it, and a wrong class (an error); both overloads return the same objects.

import Foundation
@testable import Strata
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class FetchResultTypingTests: XCTestCase {
    func testFetchResultsAreTypedByClass() throws {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes())
        try context.performAndWait {
            for code in ["a", "b"] { Quake(context: context).code = code }
            try context.save()
            context.reset()
            let typed = try context.fetch(FetchRequest<Quake>(entityName: "Quake"))
            XCTAssertEqual(Set(typed.map(\.code)), ["a", "b"])
            let general = try context.fetch(FetchRequest<ManagedObject>(entityName: "Quake"))
            XCTAssertTrue(general.allSatisfy { $0 is Quake }, "a subclass object is a ManagedObject result")
            XCTAssertThrowsError(try context.fetch(FetchRequest<Region>(entityName: "Quake"))) { error in
                XCTAssertEqual((error as? StrataError)?.code, .typeMismatch, "\(error)")
            }
            // The general overload (through a generic function) returns the same objects.
            func viaGeneral<T: FetchRequestResult>(_ request: FetchRequest<T>) throws -> [T] { try context.fetch(request) }
            XCTAssertEqual(try viaGeneral(FetchRequest<Quake>(entityName: "Quake")).map(ObjectIdentifier.init), typed.map(ObjectIdentifier.init))
            XCTAssertThrowsError(try viaGeneral(FetchRequest<Region>(entityName: "Quake")))
        }
    }
}
