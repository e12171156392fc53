// PredicateDifferentialTests: random predicates (as format strings) over random data sets, fetched
// through Strata and compared with an independent oracle (PredicateDifferentialOracle.swift).
//
// Each case: a DiffPredicate is generated, rendered to a format string with arguments, parsed by
// FetchPredicate(format:argumentArray:), and fetched from a context over an in-memory store; the
// ids fetched and context.count(for:) must equal what the oracle computes over the plain data, and
// for about 10% of cases a sorted fetch with fetchLimit/fetchOffset must equal the oracle's sorted
// slice. A second test makes random unsaved edits and checks includesPendingChanges both ways.
// The seed is printed and repeated in every failure (STRATA_SEED to repeat; STRATA_STRESS=1 for
// 20,000 predicates; STRATA_DIFF_DETAILS=n to list n disagreements instead of 12). Small fixed
// reductions of the disagreements found so far follow the random tests, so that each one fails
// under its own name.

import Foundation
import Strata
import XCTest
import _StrataTestSupport

final class PredicateDifferentialTests: XCTestCase {
    private static let model = DifferentialModel.make()

    // MARK: Saved data

    func testRandomPredicatesAgreeWithOracle() throws {
        let seed = SeededRandom.environmentSeed()
        print("PredicateDifferentialTests.testRandomPredicatesAgreeWithOracle seed \(seed) (repeat with STRATA_SEED=\(seed))")
        var random = SeededRandom(seed: seed)
        let total = iterations(1_500, stress: 20_000)
        var report = DifferentialReport(seed: seed, test: "testRandomPredicatesAgreeWithOracle")
        var caseNumber = 0
        var sortedCases = 0
        var nonEmpty = 0
        while caseNumber < total {
            let world = DifferentialWorld.random(&random)
            let store = try DifferentialStore(model: Self.model)
            let oracle = DifferentialOracle(world: world)
            try store.context.performAndWait {
                try store.load(world)
                for _ in 0..<10 where caseNumber < total {
                    caseNumber += 1
                    var generator = DifferentialGenerator(random: SeededRandom(seed: random.next()), ownerIDs: Array(world.owners.keys).sorted())
                    let predicate = generator.predicate()
                    let sort = random.chance(0.1) ? randomSort(&random) : nil
                    let expected = oracle.matches(predicate)
                    if !expected.isEmpty && expected.count < world.things.count { nonEmpty += 1 }
                    if sort != nil { sortedCases += 1 }
                    check(predicate, case: caseNumber, expected: expected, sort: sort, store: store, oracle: oracle,
                          rendering: SeededRandom(seed: random.next()), report: &report)
                }
            }
        }
        print("PredicateDifferentialTests: \(caseNumber) predicates (\(sortedCases) sorted with limit/offset, \(nonEmpty) selecting a proper non-empty subset), \(report.failures) disagreements")
        report.finish()
    }

    // MARK: Pending changes

    func testPendingChangesAgreeWithOracle() throws {
        let seed = SeededRandom.environmentSeed()
        print("PredicateDifferentialTests.testPendingChangesAgreeWithOracle seed \(seed) (repeat with STRATA_SEED=\(seed))")
        var random = SeededRandom(seed: seed &+ 1)   // not the same stream as the saved-data test
        let scenarios = iterations(40, stress: 500)
        var report = DifferentialReport(seed: seed, test: "testPendingChangesAgreeWithOracle")
        var caseNumber = 0
        for _ in 0..<scenarios {
            let saved = DifferentialWorld.random(&random)
            let store = try DifferentialStore(model: Self.model)
            try store.context.performAndWait {
                try store.load(saved)
                var pending = saved
                var edits: [String] = []
                for _ in 0..<(5 + random.next(below: 25)) {
                    edits.append(randomEdit(&pending, store: store, random: &random))
                }
                let savedOracle = DifferentialOracle(world: saved)
                let pendingOracle = DifferentialOracle(world: pending)
                let editLog = "unsaved edits: " + edits.joined(separator: "; ")
                for _ in 0..<8 {
                    caseNumber += 1
                    // Owners that exist in both views (the oracle never names a deleted owner).
                    let owners = Set(saved.owners.keys).intersection(pending.owners.keys).sorted()
                    var generator = DifferentialGenerator(random: SeededRandom(seed: random.next()), ownerIDs: owners)
                    let predicate = generator.predicate()
                    let sort = random.chance(0.1) ? randomSort(&random) : nil
                    let rendering = SeededRandom(seed: random.next())
                    check(predicate, case: caseNumber, expected: pendingOracle.matches(predicate), sort: sort, store: store,
                          oracle: pendingOracle, rendering: rendering, report: &report,
                          context: "includesPendingChanges = true; " + editLog)
                    check(predicate, case: caseNumber, expected: savedOracle.matches(predicate), sort: sort, store: store,
                          oracle: savedOracle, rendering: rendering, report: &report, includesPendingChanges: false,
                          context: "includesPendingChanges = false (saved data); " + editLog)
                }
            }
        }
        print("PredicateDifferentialTests: \(scenarios) pending-change scenarios, \(caseNumber) predicates × 2 modes, \(report.failures) disagreements")
        report.finish()
    }

    // MARK: The oracle's own semantics, checked by hand

    func testOracleSemanticsOnAHandBuiltWorld() {
        var world = DifferentialWorld()
        world.owners[1] = DiffOwnerData(oid: 1, title: "Émile", rank: nil)
        world.parts[1] = DiffPartData(pid: 1, value: 7, label: nil)
        world.parts[2] = DiffPartData(pid: 2, value: 2, label: "Café")
        world.things[1] = DiffThingData(id: 1, num: nil, score: 1.5, text: "café", flag: nil, stamp: nil, owner: 1, items: [1, 2])
        world.things[2] = DiffThingData(id: 2, num: 3, score: nil, text: nil, flag: true, stamp: nil, owner: nil, items: [])
        world.things[3] = DiffThingData(id: 3, num: 4, score: 2, text: "line\n", flag: false, stamp: nil, owner: nil, items: [])
        let oracle = DifferentialOracle(world: world)
        func comparison(_ left: DiffLeft, _ op: DiffOperator, _ right: DiffRight, _ modifier: DiffModifier = .direct,
                        _ options: DiffOptions = DiffOptions()) -> DiffPredicate {
            .comparison(DiffComparison(left: left, op: op, right: right, modifier: modifier, options: options))
        }
        let cd = DiffOptions(caseInsensitive: true, diacriticInsensitive: true)
        XCTAssertEqual(oracle.matches(comparison(.attribute("num"), .equal, .value(.null))), [1])
        XCTAssertEqual(oracle.matches(comparison(.attribute("num"), .notEqual, .value(.null))), [2, 3])
        XCTAssertEqual(oracle.matches(comparison(.attribute("num"), .less, .value(.int(100)))), [2, 3])
        XCTAssertEqual(oracle.matches(.not(comparison(.attribute("num"), .less, .value(.int(100))))), [1])
        XCTAssertEqual(oracle.matches(comparison(.attribute("text"), .equal, .value(.string("CAFE")), .direct, cd)), [1])
        XCTAssertEqual(oracle.matches(comparison(.attribute("text"), .like, .value(.string("c?f*")), .direct, DiffOptions(diacriticInsensitive: true))), [1])
        XCTAssertEqual(oracle.matches(comparison(.attribute("text"), .like, .value(.string("line")))), [])
        XCTAssertEqual(oracle.matches(comparison(.attribute("text"), .matches, .value(.string("line")))), [])
        XCTAssertEqual(oracle.matches(comparison(.attribute("text"), .matches, .value(.string("line\\n")))), [3])
        XCTAssertEqual(oracle.matches(comparison(.ownerAttribute("title"), .equal, .value(.null))), [2, 3])
        XCTAssertEqual(oracle.matches(comparison(.ownerAttribute("rank"), .equal, .value(.null))), [1, 2, 3])
        XCTAssertEqual(oracle.matches(comparison(.items("value"), .greater, .value(.int(5)), .all)), [2, 3])
        XCTAssertEqual(oracle.matches(comparison(.items("value"), .greater, .value(.int(5)), .any)), [1])
        XCTAssertEqual(oracle.matches(comparison(.items("value"), .greater, .value(.int(5)), .none)), [2, 3])
        XCTAssertEqual(oracle.matches(comparison(.items("label"), .equal, .value(.null), .any)), [1])
        XCTAssertEqual(oracle.matches(comparison(.aggregate("@sum"), .equal, .value(.int(0)))), [2, 3])
        XCTAssertEqual(oracle.matches(comparison(.aggregate("@avg"), .equal, .value(.double(4.5)))), [1])
        XCTAssertEqual(oracle.matches(comparison(.aggregate("@max"), .lessOrEqual, .value(.int(100)))), [1])
        XCTAssertEqual(oracle.matches(comparison(.aggregate("@min"), .equal, .value(.null))), [2, 3])
        XCTAssertEqual(oracle.matches(comparison(.count, .equal, .value(.int(0)))), [2, 3])
        XCTAssertEqual(oracle.matches(comparison(.subqueryCount(variable: "i", comparison(.part("label"), .beginsWith, .value(.string("caf")), .direct, cd)),
                                                 .greater, .value(.int(0)))), [1])
        XCTAssertEqual(oracle.matches(comparison(.attribute("score"), .between, .list([.int(1), .double(1.5)]))), [1])
        XCTAssertEqual(oracle.matches(comparison(.attribute("flag"), .notEqual, .value(.bool(true)))), [1, 3])
    }

    // MARK: Reductions of disagreements the random cases found

    /// A store holding `things` (with owners 1 "A" and 2 "C", and parts given per thing as values).
    private func smallStore(_ things: [(id: Int64, text: String?, owner: Int64?, parts: [Int64])]) throws -> (DifferentialStore, DifferentialWorld) {
        var world = DifferentialWorld()
        world.owners[1] = DiffOwnerData(oid: 1, title: "A", rank: 1)
        world.owners[2] = DiffOwnerData(oid: 2, title: "C", rank: 2)
        var pid: Int64 = 0
        for thing in things {
            var items: [Int64] = []
            for value in thing.parts {
                pid += 1
                world.parts[pid] = DiffPartData(pid: pid, value: value, label: nil)
                items.append(pid)
            }
            world.things[thing.id] = DiffThingData(id: thing.id, num: nil, score: nil, text: thing.text, flag: nil, stamp: nil,
                                                   owner: thing.owner, items: items)
        }
        let store = try DifferentialStore(model: Self.model)
        try store.context.performAndWait { try store.load(world) }
        return (store, world)
    }

    /// The ids `format` fetches (sorted by id unless `sortKey` is given). On the context's queue.
    private func ids(_ store: DifferentialStore, _ format: String, _ arguments: Any?..., pending: Bool = true, sortKey: String? = nil) throws -> [Int64] {
        let request = FetchRequest<ManagedObject>(entityName: DifferentialModel.thing)
        request.predicate = try FetchPredicate(format: format, argumentArray: arguments)
        request.includesPendingChanges = pending
        if let sortKey { request.sortDescriptors = [FetchSortDescriptor(key: sortKey), FetchSortDescriptor(key: "id")] }
        let result = try store.context.fetch(request).map { store.id(of: $0) ?? -1 }
        return sortKey == nil ? result.sorted() : result
    }

    /// MATCHES and LIKE must match the whole string: a trailing newline is not the end of the string.
    /// (NSRegularExpression's `$` also matches before a final line terminator.)
    func testMatchesAndLikeDoNotIgnoreATrailingNewline() throws {
        let (store, _) = try smallStore([(1, "line\n", nil, []), (2, "line", nil, []), (3, "émile", nil, [])])
        try store.context.performAndWait {
            XCTAssertEqual(try ids(store, "text MATCHES %@", "line"), [2])
            XCTAssertEqual(try ids(store, "text MATCHES %@", ".*e"), [2, 3])
            XCTAssertEqual(try ids(store, "text LIKE %@", "line"), [2])
            XCTAssertEqual(try ids(store, "text LIKE %@", "*e"), [2, 3])
            XCTAssertEqual(try ids(store, "NOT text MATCHES %@", "line"), [1, 3])
        }
    }

    /// MATCHES is an ICU regular expression with default flags: `.` does not match a line terminator.
    func testMatchesDotDoesNotMatchANewline() throws {
        let (store, _) = try smallStore([(1, "two\nlines", nil, []), (2, "two lines", nil, [])])
        try store.context.performAndWait {
            XCTAssertEqual(try ids(store, "text MATCHES %@", "two.lines"), [2])
            XCTAssertEqual(try ids(store, "text MATCHES %@", ".*lines"), [2])
            XCTAssertEqual(try ids(store, "text MATCHES %@", ".+"), [2])
        }
    }

    /// `[d]` applies to MATCHES as to every string operator.
    func testMatchesHonoursDiacriticInsensitivity() throws {
        let (store, _) = try smallStore([(1, "café", nil, []), (2, "émile", nil, []), (3, "cafe", nil, [])])
        try store.context.performAndWait {
            XCTAssertEqual(try ids(store, "text MATCHES[d] %@", "cafe"), [1, 3])
            XCTAssertEqual(try ids(store, "text MATCHES[cd] %@", "E.*"), [2])
            XCTAssertEqual(try ids(store, "text MATCHES[cd] %@", ".*É.*"), [1, 2, 3])
            XCTAssertEqual(try ids(store, "text MATCHES[c] %@", "CAFÉ"), [1])
        }
    }

    /// includesPendingChanges = false matches against the store: related objects (to-one
    /// destinations, to-many elements, subquery elements, sort keys through to-ones) are compared
    /// with their saved values too, not with the context's unsaved edits or deletions.
    func testIncludesPendingChangesFalseEvaluatesRelatedObjectsAsSaved() throws {
        let (store, _) = try smallStore([(1, "x", 1, [1]), (2, "y", 2, [])])
        try store.context.performAndWait {
            store.owners[1]!.setValue("Z", forKey: "title")
            store.parts[1]!.setValue(Int64(9), forKey: "value")
            // With pending changes: the edits count.
            XCTAssertEqual(try ids(store, "owner.title == %@", "Z"), [1])
            XCTAssertEqual(try ids(store, "ANY items.value == 9"), [1])
            XCTAssertEqual(try ids(store, "TRUEPREDICATE", sortKey: "owner.title"), [2, 1])
            // Without: the saved values.
            XCTAssertEqual(try ids(store, "owner.title == %@", "A", pending: false), [1], "to-one destination read with unsaved values")
            XCTAssertEqual(try ids(store, "ANY items.value == 1", pending: false), [1], "to-many element read with unsaved values")
            XCTAssertEqual(try ids(store, "items.@sum.value == 1", pending: false), [1], "collection operator over unsaved values")
            XCTAssertEqual(try ids(store, "SUBQUERY(items, $p, $p.value == 1).@count == 1", pending: false), [1], "subquery over unsaved values")
            XCTAssertEqual(try ids(store, "TRUEPREDICATE", pending: false, sortKey: "owner.title"), [1, 2], "sort through a to-one with unsaved values")
            // An owner deleted in the context (not saved) is still in the store.
            store.context.delete(store.owners[2]!)
            XCTAssertEqual(try ids(store, "owner.title == %@", "C", pending: false), [2], "to-one destination deleted in the context read as nil")
            XCTAssertEqual(try ids(store, "owner.rank == 2", pending: false), [2], "to-one destination deleted in the context read as nil")
        }
    }

    // MARK: One case

    private struct SortSpec {
        var key: String
        var ascending: Bool
        var limit: Int
        var offset: Int
    }

    private func randomSort(_ random: inout SeededRandom) -> SortSpec {
        let keys = ["num", "score", "text", "stamp", "flag", "owner.title", "owner.rank", "id"]
        return SortSpec(key: keys[random.next(below: keys.count)], ascending: random.chance(0.5),
                        limit: random.chance(0.2) ? 0 : 1 + random.next(below: 20), offset: random.chance(0.3) ? 0 : random.next(below: 15))
    }

    /// The oracle's order for a sort key: nil first ascending (last descending), ties by id ascending.
    private func sortedIDs(_ ids: Set<Int64>, _ sort: SortSpec, _ oracle: DifferentialOracle) -> [Int64] {
        let world = oracle.world
        func key(_ id: Int64) -> DiffValue {
            let thing = world.things[id]!
            let owner = thing.owner.flatMap { world.owners[$0] }
            switch sort.key {
            case "num": return thing.num.map(DiffValue.int) ?? .null
            case "score": return thing.score.map(DiffValue.double) ?? .null
            case "text": return thing.text.map(DiffValue.string) ?? .null
            case "stamp": return thing.stamp.map(DiffValue.date) ?? .null
            case "flag": return thing.flag.map(DiffValue.bool) ?? .null
            case "owner.title": return owner?.title.map(DiffValue.string) ?? .null
            case "owner.rank": return owner?.rank.map(DiffValue.int) ?? .null
            default: return .int(id)
            }
        }
        let keyed = ids.map { ($0, key($0)) }
        let ordered = keyed.sorted { a, b in
            let order: Int
            switch (a.1, b.1) {
            case (.null, .null): order = 0
            case (.null, _): order = -1
            case (_, .null): order = 1
            default: order = oracle.order(a.1, b.1, DiffOptions()) ?? 0
            }
            if order != 0 { return (order < 0) == sort.ascending }
            return a.0 < b.0
        }.map(\.0)
        var slice = Array(ordered.dropFirst(sort.offset))
        if sort.limit > 0 { slice = Array(slice.prefix(sort.limit)) }
        return slice
    }

    /// Fetches `predicate` through Strata and compares with `expected`. On the context's queue.
    private func check(_ predicate: DiffPredicate, case number: Int, expected: Set<Int64>, sort: SortSpec?,
                       store: DifferentialStore, oracle: DifferentialOracle, rendering: SeededRandom,
                       report: inout DifferentialReport, includesPendingChanges: Bool = true, context: String = "") {
        var renderer = DifferentialRenderer(random: rendering, ownerObject: { store.owners[$0]! })
        let format = renderer.render(predicate)
        var header = "case \(number): \(format)"
        if !renderer.argumentDescriptions.isEmpty { header += "\n    arguments: " + renderer.argumentDescriptions.joined(separator: ", ") }
        if !context.isEmpty { header += "\n    " + context }
        let request = FetchRequest<ManagedObject>(entityName: DifferentialModel.thing)
        request.includesPendingChanges = includesPendingChanges
        do {
            request.predicate = try FetchPredicate(format: format, argumentArray: renderer.arguments)
            let fetched = try store.context.fetch(request)
            var ids: [Int64] = []
            for object in fetched {
                guard let id = store.id(of: object) else {
                    report.record(header + "\n    fetch returned an object that is not the registered instance: \(object.objectID)")
                    return
                }
                ids.append(id)
            }
            let actual = Set(ids)
            if actual != expected || ids.count != actual.count {
                report.record(header + "\n    " + difference(expected: expected, actual: actual, duplicates: ids.count - actual.count, oracle: oracle))
                return
            }
            let count = try store.context.count(for: request)
            if count != expected.count {
                report.record(header + "\n    count(for:) = \(count), oracle \(expected.count) (fetch agreed)")
                return
            }
            if let sort {
                request.sortDescriptors = [FetchSortDescriptor(key: sort.key, ascending: sort.ascending), FetchSortDescriptor(key: "id")]
                request.fetchLimit = sort.limit
                request.fetchOffset = sort.offset
                let ordered = try store.context.fetch(request).map { store.id(of: $0) ?? -1 }
                let wanted = sortedIDs(expected, sort, oracle)
                if ordered != wanted {
                    report.record(header + "\n    sorted by \(sort.key) \(sort.ascending ? "ascending" : "descending"), id; limit \(sort.limit) offset \(sort.offset)"
                                  + "\n    Strata: \(ordered)\n    oracle: \(wanted)")
                }
            }
        } catch {
            report.record(header + "\n    Strata threw: \(error) (oracle: \(expected.count) matches)")
        }
    }

    private func difference(expected: Set<Int64>, actual: Set<Int64>, duplicates: Int, oracle: DifferentialOracle) -> String {
        let extra = actual.subtracting(expected).sorted(), missing = expected.subtracting(actual).sorted()
        var lines = ["Strata \(actual.count) objects, oracle \(expected.count)" + (duplicates > 0 ? " (\(duplicates) duplicates)" : "")]
        if !extra.isEmpty { lines.append("only Strata: \(extra)") }
        if !missing.isEmpty { lines.append("only oracle: \(missing)") }
        for id in (extra + missing).prefix(4) { lines.append("  " + oracle.world.describe(thing: id)) }
        return lines.joined(separator: "\n    ")
    }

    // MARK: Unsaved edits

    /// Applies one random unsaved edit to the context and to `world`; returns a description.
    private func randomEdit(_ world: inout DifferentialWorld, store: DifferentialStore, random: inout SeededRandom) -> String {
        func pickKey<V>(_ dictionary: [Int64: V]) -> Int64? {
            let keys = dictionary.keys.sorted()
            return keys.isEmpty ? nil : keys[random.next(below: keys.count)]
        }
        func thingOfPart(_ pid: Int64) -> Int64? { world.things.values.first { $0.items.contains(pid) }?.id }
        switch random.next(below: 12) {
        case 0, 1, 2:
            guard let id = pickKey(world.things) else { return "none" }
            let object = store.things[id]!
            switch random.next(below: 5) {
            case 0:
                let value = DifferentialWorld.randomNum(&random); world.things[id]!.num = value; object.setValue(value, forKey: "num")
                return "thing #\(id).num = \(value.map { "\($0)" } ?? "nil")"
            case 1:
                let value = DifferentialWorld.randomScore(&random); world.things[id]!.score = value; object.setValue(value, forKey: "score")
                return "thing #\(id).score = \(value.map { "\($0)" } ?? "nil")"
            case 2:
                let value = DifferentialWorld.randomString(&random); world.things[id]!.text = value; object.setValue(value, forKey: "text")
                return "thing #\(id).text = \(value?.debugDescription ?? "nil")"
            case 3:
                let value = DifferentialWorld.randomFlag(&random); world.things[id]!.flag = value; object.setValue(value, forKey: "flag")
                return "thing #\(id).flag = \(value.map { "\($0)" } ?? "nil")"
            default:
                let value = DifferentialWorld.randomStamp(&random); world.things[id]!.stamp = value; object.setValue(value, forKey: "stamp")
                return "thing #\(id).stamp = \(value.map { DiffValue.date($0).description } ?? "nil")"
            }
        case 3:
            guard let id = pickKey(world.things) else { return "none" }
            let oid = random.chance(0.25) ? nil : pickKey(world.owners)
            world.things[id]!.owner = oid
            store.things[id]!.setValue(oid.map { store.owners[$0]! }, forKey: "owner")
            return "thing #\(id).owner = \(oid.map { "owner#\($0)" } ?? "nil")"
        case 4:
            guard let oid = pickKey(world.owners) else { return "none" }
            if random.chance(0.5) {
                let value = DifferentialWorld.randomString(&random); world.owners[oid]!.title = value; store.owners[oid]!.setValue(value, forKey: "title")
                return "owner#\(oid).title = \(value?.debugDescription ?? "nil")"
            }
            let value = DifferentialWorld.randomNum(&random); world.owners[oid]!.rank = value; store.owners[oid]!.setValue(value, forKey: "rank")
            return "owner#\(oid).rank = \(value.map { "\($0)" } ?? "nil")"
        case 5:
            guard let pid = pickKey(world.parts) else { return "none" }
            if random.chance(0.5) {
                let value = DifferentialWorld.randomValue(&random); world.parts[pid]!.value = value; store.parts[pid]!.setValue(value, forKey: "value")
                return "part \(pid).value = \(value)"
            }
            let value = DifferentialWorld.randomString(&random); world.parts[pid]!.label = value; store.parts[pid]!.setValue(value, forKey: "label")
            return "part \(pid).label = \(value?.debugDescription ?? "nil")"
        case 6:
            guard let pid = pickKey(world.parts) else { return "none" }
            let target = random.chance(0.2) ? nil : pickKey(world.things)
            if let from = thingOfPart(pid) { world.things[from]!.items.removeAll { $0 == pid } }
            if let target { world.things[target]!.items.append(pid) }
            store.parts[pid]!.setValue(target.map { store.things[$0]! }, forKey: "thing")
            return "part \(pid) moved to \(target.map { "thing #\($0)" } ?? "no thing")"
        case 7:
            let id = (world.things.keys.max() ?? 0) + 1000
            let owner = random.chance(0.2) ? nil : pickKey(world.owners)
            let thing = DiffThingData(id: id, num: DifferentialWorld.randomNum(&random), score: DifferentialWorld.randomScore(&random),
                                      text: DifferentialWorld.randomString(&random), flag: DifferentialWorld.randomFlag(&random),
                                      stamp: DifferentialWorld.randomStamp(&random), owner: owner, items: [])
            world.things[id] = thing
            store.insertThing(thing)
            for _ in 0..<random.next(below: 4) {
                let pid = (world.parts.keys.max() ?? 0) + 1
                let part = DiffPartData(pid: pid, value: DifferentialWorld.randomValue(&random), label: DifferentialWorld.randomString(&random))
                world.parts[pid] = part
                world.things[id]!.items.append(pid)
                store.insertPart(part, thing: id)
            }
            return "inserted " + world.describe(thing: id)
        case 8:
            let oid = (world.owners.keys.max() ?? 0) + 100
            let owner = DiffOwnerData(oid: oid, title: DifferentialWorld.randomString(&random), rank: DifferentialWorld.randomNum(&random))
            world.owners[oid] = owner
            store.insertOwner(owner)
            // Give the new owner some things, so it is reachable through owner.title.
            var given: [Int64] = []
            for _ in 0..<(1 + random.next(below: 3)) {
                guard let id = pickKey(world.things) else { break }
                world.things[id]!.owner = oid
                store.things[id]!.setValue(store.owners[oid]!, forKey: "owner")
                given.append(id)
            }
            return "inserted owner#\(oid)(title: \(owner.title?.debugDescription ?? "nil"), rank: \(owner.rank.map { "\($0)" } ?? "nil")) for things \(given)"
        case 9:
            guard let id = pickKey(world.things) else { return "none" }
            world.things[id] = nil
            store.context.delete(store.things[id]!)
            return "deleted thing #\(id)"
        case 10:
            guard let pid = pickKey(world.parts) else { return "none" }
            if let from = thingOfPart(pid) { world.things[from]!.items.removeAll { $0 == pid } }
            world.parts[pid] = nil
            store.parts[pid]!.setValue(nil, forKey: "thing")
            store.context.delete(store.parts[pid]!)
            return "deleted part \(pid)"
        default:
            guard let oid = pickKey(world.owners) else { return "none" }
            var cleared: [Int64] = []
            for id in world.things.keys.sorted() where world.things[id]!.owner == oid {
                world.things[id]!.owner = nil
                store.things[id]!.setValue(nil, forKey: "owner")
                cleared.append(id)
            }
            world.owners[oid] = nil
            store.context.delete(store.owners[oid]!)
            return "deleted owner#\(oid) (after clearing owner of things \(cleared))"
        }
    }
}

/// Disagreements of one test run: counted, the first few reported in full with the seed.
struct DifferentialReport {
    let seed: UInt64
    let test: String
    private(set) var failures = 0
    private var details: [String] = []

    init(seed: UInt64, test: String) {
        self.seed = seed
        self.test = test
    }

    mutating func record(_ detail: String) {
        failures += 1
        if details.count < (ProcessInfo.processInfo.environment["STRATA_DIFF_DETAILS"].flatMap(Int.init) ?? 12) { details.append(detail) }
    }

    func finish(file: StaticString = #filePath, line: UInt = #line) {
        guard failures > 0 else { return }
        let message = "\(test): \(failures) disagreements with the oracle — seed \(seed) (repeat with STRATA_SEED=\(seed))\n"
            + details.joined(separator: "\n") + (failures > details.count ? "\n… \(failures - details.count) more" : "")
        print(message)
        XCTFail(message, file: file, line: line)
    }
}
