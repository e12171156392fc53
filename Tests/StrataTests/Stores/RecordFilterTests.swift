import XCTest
import Foundation
@testable import Strata
@testable import StrataGraph
@testable import StrataNativeStore
import _StrataTestSupport

/// The compiled record filter must answer exactly as the predicate evaluator on everything it
/// compiles: random predicates over random rows of every compiled attribute kind.
final class RecordFilterTests: XCTestCase {
    private func layout() throws -> EntityLayout {
        let entity = EntityDescription(name: "Sample")
        entity.properties = [
            AttributeDescription(name: "count", type: .integer64), AttributeDescription(name: "ratio", type: .double),
            AttributeDescription(name: "small", type: .float), AttributeDescription(name: "flag", type: .boolean),
            AttributeDescription(name: "when", type: .date), AttributeDescription(name: "name", type: .string),
        ]
        let model = ManagedObjectModel(entities: [entity])
        try model.freeze()
        return try EntityLayout(entity: entity, store: StoreIdentity.named("s"), schema: NativeSchema.describing([entity]), maxKeyLength: 1001)
    }

    private func randomRow(_ random: inout SeededRandom) -> [RowValue] {
        let names = ["", "a", "ab", "b", "Ab", "é", "e\u{301}", "zeta", "abc"]
        return [
            random.chance(0.15) ? .null : .integer(Int64(random.next(below: 7)) - 3),
            random.chance(0.15) ? .null : .double(Double(random.next(below: 13)) / 2 - 3),
            random.chance(0.15) ? .null : .float(Float(random.next(below: 9)) / 4),
            random.chance(0.15) ? .null : .boolean(random.chance(0.5)),
            random.chance(0.15) ? .null : .date(Date(timeIntervalSinceReferenceDate: Double(random.next(below: 5)))),
            random.chance(0.15) ? .null : .string(names[random.next(below: names.count)]),
        ]
    }

    private func randomPredicate(_ random: inout SeededRandom, depth: Int = 0) -> String {
        let ops = ["==", "!=", "<", "<=", ">", ">="]
        func number() -> String { random.chance(0.5) ? "\(random.next(below: 7) - 3)" : "\(Double(random.next(below: 13)) / 2 - 3)" }
        if depth < 2 && random.chance(0.35) {
            let joiner = random.chance(0.5) ? " AND " : " OR "
            let inner = (0..<2).map { _ in randomPredicate(&random, depth: depth + 1) }.joined(separator: joiner)
            return random.chance(0.2) ? "NOT (\(inner))" : "(\(inner))"
        }
        let key = ["count", "ratio", "small", "flag"][random.next(below: 4)]
        switch random.next(below: 9) {
        case 0: return "\(key) \(ops[random.next(below: 6)]) \(number())"
        case 1: return "\(key) \(ops[random.next(below: 2)]) nil"
        case 2: return "\(key) BETWEEN {\(number()), \(number())}"
        case 3: return "\(key) IN {\(number()), \(number()), nil}"
        case 4: return "flag == \(random.chance(0.5) ? "YES" : "NO")"
        case 5: return "when \(ops[random.next(below: 6)]) CAST(\(random.next(below: 5)), 'NSDate')"
        case 6: return "name \(ops[random.next(below: 6)]) '\(["", "a", "ab", "é", "zeta"][random.next(below: 5)])'"
        case 7: return "name \(["BEGINSWITH", "ENDSWITH", "CONTAINS"][random.next(below: 3)]) '\(["", "a", "b", "e", "é"][random.next(below: 5)])'"
        default: return random.chance(0.5) ? "TRUEPREDICATE" : "FALSEPREDICATE"
        }
    }

    func testCompiledFiltersAgreeWithTheEvaluator() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let layout = try self.layout()
        let evaluator = PredicateEvaluator(source: NoRelatedRows())
        var compiled = 0, numericLane = 0
        let numbers = UnsafeMutableBufferPointer<NumericRecordValue>.allocate(capacity: layout.emptyRow.count)
        defer { numbers.deallocate() }
        for number in 0..<iterations(3_000, stress: 100_000) {
            let format = randomPredicate(&random)
            let predicate = try FetchPredicate(format: format)
            guard let filter = RecordFilter.compile(predicate, layout: layout) else { continue }
            compiled += 1
            let wanted = try XCTUnwrap(NativeReadView.recordPositions(read: predicate, layout: layout))
            for _ in 0..<8 {
                let values = randomRow(&random)
                let row = StoreRow(id: ManagedObjectID(entity: layout.entity, storeIdentifier: "s", key: .permanent(1)), version: 1, values: values)
                let expected = try evaluator.evaluate(predicate, on: row)
                XCTAssertEqual(filter.matches(values), expected, "seed \(seed), case \(number): \(format) on \(values)")
                if filter.matches(values) != expected { return }
                // The numeric lane, on the values read back from the encoded record.
                guard filter.isNumeric else { continue }
                numericLane += 1
                numbers.initialize(repeating: .other)
                let record = RowCodec.encode(version: 1, values: values, layout: layout, numberOf: { _ in 0 })
                try record.withUnsafeBytes { try RowCodec.decodeNumeric($0, layout: layout, key: 1, into: numbers, only: wanted) }
                XCTAssertEqual(filter.matches(numeric: UnsafeBufferPointer(numbers)), expected, "numeric lane, seed \(seed), case \(number): \(format) on \(values)")
            }
        }
        XCTAssertGreaterThan(compiled, iterations(3_000, stress: 100_000) / 2, "seed \(seed): most predicates should compile")
        XCTAssertGreaterThan(numericLane, compiled, "seed \(seed): most compiled filters take the numeric lane")
    }

    func testWhatTheEvaluatorMustDecideIsNotCompiled() throws {
        let layout = try self.layout()
        for format in ["name ==[c] 'A'", "name LIKE 'a*'", "count == 'three'", "name == 3", "count + 1 > 2", "ANY name == 'a'", "name MATCHES 'a.'"] {
            XCTAssertNil(RecordFilter.compile(try FetchPredicate(format: format), layout: layout), format)
        }
    }
}

private struct NoRelatedRows: PredicateRowSource {
    func row(for id: ManagedObjectID) throws -> StoreRow? { nil }
}
