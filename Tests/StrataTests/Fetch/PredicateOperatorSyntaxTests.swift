// PredicateOperatorSyntaxTests: bitwise operators (`& | ^ << >> ~`), index subscripts
// (`[FIRST] [LAST] [SIZE] [n]`) and the dictionary operators `@allKeys`/`@allValues`, as real
// format strings use them: they parse with C's precedence, print back to formats that parse to
// the same tree, and evaluate in fetches on both stores (flags filtered by `(%K & %d) != 0`, the
// first of an ordered to-many, sizes, keys and values of a dictionary attribute).

import Foundation
@testable import Strata
@testable import StrataGraph
import XCTest
import _StrataTestSupport

final class PredicateOperatorSyntaxTests: XCTestCase {
    func testBitwiseOperatorsParseWithCPrecedenceAndRoundTrip() throws {
        let cases: [(String, String)] = [
            ("(flags & 4) != 0", "flags & 4 != 0"),
            ("flags & 4 | 1 == 5", "flags & 4 | 1 == 5"),
            ("flags | 1 & 4 == 1", "flags | 1 & 4 == 1"),
            ("(flags | 1) & 4 == 0", "(flags | 1) & 4 == 0"),
            ("flags ^ 3 == 1", "flags ^ 3 == 1"),
            ("flags << 2 == 8", "flags << 2 == 8"),
            ("flags >> 1 + 1 == 1", "flags >> 1 + 1 == 1"),
            ("~flags == -3", "~flags == -3"),
            ("~(flags & 1) == -1", "~(flags & 1) == -1"),
        ]
        for (format, printed) in cases {
            let predicate = try FetchPredicate(format: format)
            XCTAssertEqual(predicate.predicateFormat, printed, format)
            XCTAssertEqual(try FetchPredicate(format: predicate.predicateFormat), predicate, "round trip of \(format)")
        }
        let flagged = try FetchPredicate(format: "(%K & %d) != 0", "flags", 4)
        guard case .comparison(let comparison) = flagged.node, case .function(let name, _) = comparison.left else {
            return XCTFail("\(flagged)")
        }
        XCTAssertEqual(name, "bitwiseAnd:with:")
    }

    func testIndexSubscriptsParseAndRoundTrip() throws {
        for format in ["tags[FIRST].name == 'a'", "tags[LAST].name == 'a'", "tags[2].name == 'a'", "count:(tags) == 2",
                       "tags[%d].name == 'b'"] {
            let predicate = try FetchPredicate(format: format, argumentArray: format.contains("%d") ? [1] : [])
            XCTAssertEqual(try FetchPredicate(format: predicate.predicateFormat), predicate, "round trip of \(format): \(predicate.predicateFormat)")
        }
        XCTAssertEqual(try FetchPredicate(format: "tags[SIZE] == 2"), try FetchPredicate(format: "count:(tags) == 2"))
        XCTAssertThrowsError(try FetchPredicate(format: "tags[FIRST == 1"))
    }

    func testBitwiseFlagsAndSubscriptsFilterFetches() throws {
        let item = EntityDescription(name: "Item", properties: [AttributeDescription(name: "name", type: .string),
                                                                 AttributeDescription(name: "flags", type: .integer64)])
        let (_, context) = try TestModels.stack(ManagedObjectModel(entities: [item]))
        try context.performAndWait {
            var expected: [Int64: Set<String>] = [:]
            for value in 0..<32 {
                let object = ManagedObject(entity: item, insertInto: context)
                object.setValue("i\(value)", forKey: "name")
                object.setValue(Int64(value), forKey: "flags")
                for bit in [1, 4, 16] where value & bit != 0 { expected[Int64(bit), default: []].insert("i\(value)") }
            }
            try context.save()
            for bit in [Int64(1), 4, 16] {
                let request = FetchRequest<ManagedObject>(entityName: "Item")
                request.predicate = try FetchPredicate(format: "(%K & %d) != 0", "flags", bit)
                let names = Set(try context.fetch(request).compactMap { $0.value(forKey: "name") as? String })
                XCTAssertEqual(names, expected[bit], "flag \(bit)")
                XCTAssertEqual(try context.count(for: request), expected[bit]?.count)
            }
            let shifted = FetchRequest<ManagedObject>(entityName: "Item")
            shifted.predicate = try FetchPredicate(format: "flags >> 3 == 1 AND ~flags < -10")
            XCTAssertEqual(Set(try context.fetch(shifted).compactMap { $0.value(forKey: "flags") as? Int64 }), Set(Int64(10)...15))
        }

        let (_, posts) = try TestModels.stack(try TestModels.posts())
        try posts.performAndWait {
            let post = Post(context: posts)
            post.title = "p"
            for name in ["a", "b", "c"] {
                let tag = Tag(context: posts)
                tag.name = name
                post.tags.insert(tag)
            }
            let lonely = Post(context: posts)
            lonely.title = "q"
            try posts.save()
            let sized = FetchRequest<Post>(entityName: "Post")
            sized.predicate = try FetchPredicate(format: "tags[SIZE] == 3")
            XCTAssertEqual(try posts.fetch(sized).map(\.title), ["p"])
            let first = FetchRequest<Post>(entityName: "Post")
            first.predicate = try FetchPredicate(format: "tags[FIRST].name IN {'a', 'b', 'c'}")
            XCTAssertEqual(try posts.fetch(first).map(\.title), ["p"], "the first tag of an empty to-many is nil")
            let beyond = FetchRequest<Post>(entityName: "Post")
            beyond.predicate = try FetchPredicate(format: "tags[5].name == 'a'")
            XCTAssertThrowsError(try posts.fetch(beyond), "an index beyond the collection is an error, as in Core Data")
        }
    }

    func testDictionaryKeysAndValuesParseRoundTripAndFilter() throws {
        for format in ["ANY info.@allKeys == 'color'", "ANY %K.@allValues != %@", "NOT ANY info.@allKeys LIKE NULL",
                       "ANY info.@ALLVALUES IN {'red', 'blue'}", "info['color'] == 'red'", "%K['color'] == %@"] {
            let predicate = try FetchPredicate(format: format, argumentArray: format.contains("%K") ? ["info", "red"] : [])
            XCTAssertEqual(try FetchPredicate(format: predicate.predicateFormat), predicate, "round trip of \(format): \(predicate.predicateFormat)")
        }
        XCTAssertTrue(try FetchPredicate(format: "ANY info.@allkeys == 'a'").predicateFormat.contains("@allKeys"))
        let info = AttributeDescription(name: "info", type: .transformable)
        info.transformableType = [String: String].self
        let item = EntityDescription(name: "Item", properties: [AttributeDescription(name: "name", type: .string), info])
        for type in [StoreType.inMemory, .native] {
            let (_, context) = try TestModels.stack(ManagedObjectModel(entities: [item]), storeType: type)
            try context.performAndWait {
                for (name, values) in [("a", ["color": "red"]), ("b", ["size": "big", "color": "blue"]), ("c", [:])] {
                    let object = ManagedObject(entity: item, insertInto: context)
                    object.setValue(name, forKey: "name")
                    object.setValue(values, forKey: "info")
                }
                try context.save()
                func names(_ format: String, _ arguments: Any...) throws -> [String] {
                    let request = FetchRequest<ManagedObject>(entityName: "Item")
                    request.predicate = try FetchPredicate(format: format, argumentArray: arguments)
                    request.sortDescriptors = [FetchSortDescriptor(key: "name")]
                    return try context.fetch(request).compactMap { $0.value(forKey: "name") as? String }
                }
                XCTAssertEqual(try names("ANY info.@allKeys == 'color'"), ["a", "b"], "\(type)")
                XCTAssertEqual(try names("ANY info.@allKeys == 'size'"), ["b"], "\(type)")
                XCTAssertEqual(try names("ANY %K.@allValues == %@", "info", "red"), ["a"], "\(type)")
                XCTAssertEqual(try names("info.@allValues.@count == 0"), ["c"], "\(type)")
                XCTAssertEqual(try names("info['color'] == 'blue'"), ["b"], "\(type): a dictionary subscript")
                XCTAssertEqual(try names("%K['size'] == %@", "info", "big"), ["b"], "\(type): after %K")
                XCTAssertEqual(try names("info['size'] == nil"), ["a", "c"], "\(type): a missing key is nil")
            }
        }
    }
}
