// UniquenessEquivalenceTests: what "equal" means for a uniqueness constraint on text (issue 26,
// item 4). Strata compares as Swift's String does, by Unicode canonical equivalence: "é" (U+00E9)
// and "e" + U+0301 are the same code on both store types, as they are for `==` in the object
// graph and in predicates. (Core Data on SQLite compares bytes and would keep two rows; FORMAT.md
// §19.1 says why Strata does not.) Values longer than the index key cap, whose keys tie, are
// compared whole: equal ones conflict, different ones are two rows.

import Foundation
@testable import Strata
import XCTest
import _StrataTestSupport

final class UniquenessEquivalenceTests: XCTestCase {
    private func save(_ codes: [String], type: StoreType, policy: MergePolicy = .error) throws -> (saved: [String], error: StrataError?) {
        let (_, context) = try TestModels.stack(try TestModels.earthquakes(), storeType: type)
        context.mergePolicy = policy
        return try context.performAndWait {
            var failure: StrataError?
            for code in codes {
                let quake = Quake(context: context)
                quake.code = code
                do { try context.save() } catch let error as StrataError {
                    failure = error
                    context.rollback()
                }
            }
            let request = FetchRequest<Quake>(entityName: "Quake")
            return (try context.fetch(request).map(\.code), failure)
        }
    }

    func testCanonicallyEquivalentCodesAreOneCodeOnBothStores() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        XCTAssertEqual(composed, decomposed, "Swift's String equality is canonical equivalence")
        XCTAssertNotEqual(Array(composed.utf8), Array(decomposed.utf8))
        for type in [StoreType.inMemory, .native] {
            let (saved, error) = try save([composed, decomposed], type: type)
            XCTAssertEqual(saved.count, 1, "\(type)")
            XCTAssertEqual(Array(saved[0].utf8), Array(composed.utf8), "\(type): the first spelling stays")
            XCTAssertEqual(error?.code, .constraintConflict, "\(type)")
        }
    }

    func testLongValuesAreComparedWhole() throws {
        let prefix = String(repeating: "x", count: 3000)
        for type in [StoreType.inMemory, .native] {
            // Past the index cap the keys tie; the values differ at the end: two rows.
            let (distinct, noError) = try save([prefix + "a", prefix + "b"], type: type)
            XCTAssertEqual(Set(distinct.map { $0.suffix(1) }), ["a", "b"], "\(type)")
            XCTAssertNil(noError, "\(type)")
            // Equal after the tie (canonically): a conflict.
            let (one, error) = try save([prefix + "caf\u{E9}", prefix + "cafe\u{301}"], type: type)
            XCTAssertEqual(one.count, 1, "\(type)")
            XCTAssertEqual(error?.code, .constraintConflict, "\(type)")
        }
    }

    func testPredicatesFindEitherSpelling() throws {
        for type in [StoreType.inMemory, .native] {
            let (_, context) = try TestModels.stack(try TestModels.earthquakes(), storeType: type)
            try context.performAndWait {
                Quake(context: context).code = "caf\u{E9}"
                try context.save()
                let request = FetchRequest<Quake>(entityName: "Quake")
                request.predicate = try FetchPredicate(format: "code == %@", "cafe\u{301}")
                XCTAssertEqual(try context.count(for: request), 1, "\(type)")
            }
        }
    }
}
