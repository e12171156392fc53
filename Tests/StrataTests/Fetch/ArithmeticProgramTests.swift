// ArithmeticProgramTests: a compiled arithmetic program (ArithmeticProgram.swift) must answer
// exactly as the predicate evaluator on everything it compiles: random expression trees of the
// four operations over integer, double, float and small-integer attributes (nil among them) and
// integer and double constants (zero, negative zero, halves, integers near the edge of exact
// doubles), on random rows. Expressions outside the subset must not compile.

import XCTest
import Foundation
@testable import Strata
@testable import StrataGraph
import _StrataTestSupport

final class ArithmeticProgramTests: XCTestCase {
    private func entity() throws -> EntityDescription {
        let entity = EntityDescription(name: "Gauge")
        entity.properties = [
            AttributeDescription(name: "count", type: .integer64), AttributeDescription(name: "ratio", type: .double),
            AttributeDescription(name: "small", type: .float), AttributeDescription(name: "short", type: .integer16),
            AttributeDescription(name: "flag", type: .boolean), AttributeDescription(name: "name", type: .string),
        ]
        for case let attribute as AttributeDescription in entity.properties { attribute.isOptional = true }
        try ManagedObjectModel(entities: [entity]).freeze()
        return entity
    }

    private func randomRow(_ random: inout SeededRandom) -> [RowValue] {
        let big: [Int64] = [1 << 53, (1 << 53) + 1, Int64.max / 2, -(1 << 62)]
        return [
            random.chance(0.15) ? .null : .integer(random.chance(0.1) ? big[random.next(below: big.count)] : Int64(random.next(below: 9)) - 4),
            random.chance(0.15) ? .null : .double([0.0, -0.0, 0.5, -1.25, 3.0, 1e300][random.next(below: 6)]),
            random.chance(0.15) ? .null : .float(Float(random.next(below: 9)) / 4),
            random.chance(0.15) ? .null : .integer(Int64(random.next(below: 5)) - 2),
            .boolean(random.chance(0.5)),
            .string("n"),
        ]
    }

    private func randomExpression(_ random: inout SeededRandom, depth: Int) -> String {
        if depth == 0 || random.chance(0.3) {
            switch random.next(below: 6) {
            case 0: return "count"
            case 1: return "ratio"
            case 2: return "small"
            case 3: return "short"
            case 4: return ["0", "1", "-2", "3", "9007199254740993"][random.next(below: 5)]
            default: return ["0.0", "-0.0", "0.5", "2.5", "1e300"][random.next(below: 5)]
            }
        }
        let operation = ["+", "-", "*", "/"][random.next(below: 4)]
        return "(\(randomExpression(&random, depth: depth - 1)) \(operation) \(randomExpression(&random, depth: depth - 1)))"
    }

    private func same(_ a: PredicateValue?, _ b: PredicateValue?) -> Bool {
        if case .double(let x)? = a, case .double(let y)? = b { return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN) }
        return a == b
    }

    func testProgramsAnswerAsTheEvaluator() throws {
        let seed = SeededRandom.environmentSeed()
        var random = SeededRandom(seed: seed)
        let entity = try entity()
        let evaluator = PredicateEvaluator(source: NoRows())
        var compiled = 0
        for _ in 0..<iterations(400, stress: 4_000) {
            let format = randomExpression(&random, depth: 3)
            let expression = try FetchExpression(format: format)
            guard let program = ArithmeticProgram.compile(expression, entity: entity) else {
                // Only a bare key or constant is left to the evaluator.
                XCTAssertFalse(format.contains("("), "\(format) did not compile, seed \(seed)")
                continue
            }
            compiled += 1
            for _ in 0..<20 {
                let row = StoreRow(id: ManagedObjectID(entity: entity, store: .named("arithmetic"), key: .permanent(1)), version: 1,
                                   values: randomRow(&random))
                let expected = try evaluator.value(of: expression, on: row).scalar
                let answer = program.value(row.values)
                XCTAssertTrue(same(answer, expected), "\(format) on \(row.values): program \(String(describing: answer)), evaluator \(String(describing: expected)), seed \(seed)")
            }
        }
        XCTAssertGreaterThan(compiled, 100, "seed \(seed)")
    }

    func testExpressionsOutsideTheSubsetAreLeftToTheEvaluator() throws {
        let entity = try entity()
        for format in ["count + flag", "name + 1", "abs:(count)", "count ** 2", "count + nil", "count", "2 + 3 + now()", "count + self.missing"] {
            guard let expression = try? FetchExpression(format: format) else { continue }
            XCTAssertNil(ArithmeticProgram.compile(expression, entity: entity), format)
        }
        XCTAssertNotNil(ArithmeticProgram.compile(try FetchExpression(format: "ratio + 0.5"), entity: entity))
        XCTAssertNotNil(ArithmeticProgram.compile(try FetchExpression(format: "(count - short) * 2 / small"), entity: entity))
    }
}

private struct NoRows: PredicateRowSource {
    func row(for id: ManagedObjectID) throws -> StoreRow? { nil }
}
