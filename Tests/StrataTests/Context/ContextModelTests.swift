// ContextModelTests: a model-based randomized test of contexts on in-memory stores.
//
// Owns: a dictionary oracle of the object graph (committed quakes by code, committed regions by
// name, and each context's unsaved changes as an overlay on what its parent or the store shows)
// and a random walk of context operations checked against it after every step. The walk is driven
// by `SeededRandom`: the seed comes from STRATA_SEED (or is random) and every failure message names
// it, the step and the operation, so `STRATA_SEED=<seed> swift test --filter ContextModelTests`
// replays it exactly.
//
// Conflict avoidance (the invariant the oracle relies on): every quake and region is *owned* by
// the context that inserted it, and only its owner ever changes or deletes it, and a quake is only
// ever related to a region of the same owner. So no save can meet an optimistic-locking conflict
// (the contexts keep the default `.error` merge policy, and a conflict fails the test), and each
// context's view is exactly: its parent's view (or the committed state), overlaid with its own
// unsaved changes. Other owners' objects a context loaded earlier may be stale (no merging here, as
// in Core Data), so their values are only checked when a root context fetches them as faults;
// their presence is always checked. Codes and region names are never reused, so uniqueness
// constraints never fire.
//
// Child contexts (third variant): a child saves into its parent. As Core Data, a child's saved
// objects keep temporary IDs after the parent saves (so the child must not go on changing those
// instances); the child therefore either obtains permanent IDs before saving (half its saves) or,
// once it has saved temporary IDs, its parent only saves while the child has no unsaved changes,
// and right after the parent's save the child refreshes all its objects, so no clean object of the
// child still refers to a temporary ID (it re-fetches after that, getting the permanent-ID objects).
// A parent never rolls back, resets or discards with refresh, which would drop changes the child
// believes saved.
//
// Steps: ~300 by default, 5,000 with STRATA_STRESS=1.

import Foundation
import Strata
import XCTest
import _StrataTestSupport

final class ContextModelTests: XCTestCase {
    func testRandomOperationsOnThreeContextsOfOneCoordinatorMatchTheOracle() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try TestStores.add(to: coordinator)
        let simulation = ContextSimulation(seed: SeededRandom.environmentSeed(), coordinators: [coordinator],
                                           contextCoordinators: [0, 0, 0])
        simulation.run(steps: iterations(300, stress: 5_000))
    }

    func testRandomOperationsOnContextsOfTwoCoordinatorsSharingANamedStoreMatchTheOracle() throws {
        // Two separately built (identical) models: rows written through one are rebound to the other.
        let url = URL(fileURLWithPath: "/dev/null/context-model-\(UUID().uuidString)")
        let first = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        let second = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try TestStores.add(to: first, path: url.path)
        try TestStores.add(to: second, path: url.path)
        let simulation = ContextSimulation(seed: SeededRandom.environmentSeed(), coordinators: [first, second],
                                           contextCoordinators: [0, 1, 1])
        simulation.run(steps: iterations(300, stress: 5_000))
    }

    func testRandomOperationsOnARootItsChildAndAnotherRootMatchTheOracle() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        try TestStores.add(to: coordinator)
        let simulation = ContextSimulation(seed: SeededRandom.environmentSeed(), coordinators: [coordinator],
                                           contextCoordinators: [0, 0, 0], parents: [nil, 0, nil])
        simulation.run(steps: iterations(300, stress: 5_000))
    }

    /// An object inserted and deleted before a save never reaches a store and leaves the context
    /// with the save (as in Core Data), instead of staying registered with its temporary ID.
    func testObjectInsertedAndDeletedBeforeSaveIsNotRegisteredAfterTheSave() throws {
        let (_, context) = try TestModels.stack(TestModels.earthquakes())
        try context.performAndWait {
            let kept = Quake(context: context)
            kept.code = "kept"
            let dropped = Quake(context: context)
            dropped.code = "dropped"
            context.delete(dropped)
            XCTAssertFalse(context.insertedObjects.contains(dropped))
            try context.save()
            XCTAssertFalse(context.hasChanges)
            XCTAssertTrue(context.registeredObjects.contains(kept))
            XCTAssertFalse(context.registeredObjects.contains(dropped),
                           "an object inserted and deleted before save() is still registered after it")
            XCTAssertNil(dropped.managedObjectContext, "an object inserted and deleted before save() still has its context")
            XCTAssertNil(context.registeredObject(for: dropped.objectID))
        }
    }
}

// MARK: - Oracle

/// What a quake looks like to the oracle.
private struct QuakeState: Equatable, CustomStringConvertible {
    var magnitude: Double
    var place: String
    var region: String?

    var description: String { "(\(magnitude), \"\(place)\", \(region ?? "nil"))" }
}

/// The committed state, and each context's unsaved changes as an overlay on its parent's view
/// (or, for a root context, on the committed state). See the file comment for why this is exact.
private struct ContextOracle {
    var committedQuakes: [String: QuakeState] = [:]
    var committedRegions: Set<String> = []
    /// Quake code or region name → index of the context that inserted it.
    var owner: [String: Int] = [:]
    /// Each context's parent context, if any.
    let parents: [Int?]
    /// Each context's unsaved quake changes: code → new state, or nil for deleted.
    var pendingQuakes: [[String: QuakeState?]]
    /// Each context's unsaved region changes: name → exists.
    var pendingRegions: [[String: Bool]]

    init(parents: [Int?]) {
        self.parents = parents
        pendingQuakes = Array(repeating: [:], count: parents.count)
        pendingRegions = Array(repeating: [:], count: parents.count)
    }

    /// What a fetch without this context's pending changes shows: the parent's view or the store.
    func baseQuakes(of index: Int) -> [String: QuakeState] {
        parents[index].map(quakeView(of:)) ?? committedQuakes
    }

    func baseRegions(of index: Int) -> Set<String> {
        parents[index].map(regionView(of:)) ?? committedRegions
    }

    /// The quakes a fetch with pending changes returns in context `index`.
    func quakeView(of index: Int) -> [String: QuakeState] {
        var view = baseQuakes(of: index)
        for (code, state) in pendingQuakes[index] { view[code] = state }
        return view
    }

    func regionView(of index: Int) -> Set<String> {
        var view = baseRegions(of: index)
        for (name, exists) in pendingRegions[index] {
            if exists { view.insert(name) } else { view.remove(name) }
        }
        return view
    }

    /// Whether context `index` shows something its base does not.
    func hasDifferences(_ index: Int) -> Bool {
        quakeView(of: index) != baseQuakes(of: index) || regionView(of: index) != baseRegions(of: index)
    }

    var hasPending: [Bool] { pendingQuakes.indices.map { !pendingQuakes[$0].isEmpty || !pendingRegions[$0].isEmpty } }

    mutating func setQuake(_ code: String, _ state: QuakeState?, in index: Int) {
        pendingQuakes[index].updateValue(state, forKey: code)
    }

    mutating func setRegion(_ name: String, exists: Bool, in index: Int) {
        pendingRegions[index][name] = exists
    }

    /// A save: into the parent's overlay, or into the committed state.
    mutating func save(_ index: Int) {
        if let parent = parents[index] {
            pendingQuakes[parent].merge(pendingQuakes[index]) { $1 }
            pendingRegions[parent].merge(pendingRegions[index]) { $1 }
        } else {
            for (code, state) in pendingQuakes[index] { committedQuakes[code] = state }
            for (name, exists) in pendingRegions[index] {
                if exists { committedRegions.insert(name) } else { committedRegions.remove(name) }
            }
        }
        discard(index)
    }

    /// Rollback and reset: the context's view falls back to its base.
    mutating func discard(_ index: Int) {
        pendingQuakes[index] = [:]
        pendingRegions[index] = [:]
    }
}

// MARK: - Simulation

private enum ContextOperation: String, CaseIterable {
    case insertQuake, insertRegion, updateMagnitude, updatePlace, deleteQuake, deleteRegion
    case setRegion, clearRegion, save, rollback, reset, refreshDiscarding, refreshMerging, refreshAll

    var weight: Int {
        switch self {
        case .insertQuake: return 16
        case .insertRegion: return 5
        case .updateMagnitude: return 12
        case .updatePlace: return 7
        case .deleteQuake: return 7
        case .deleteRegion: return 2
        case .setRegion: return 10
        case .clearRegion: return 4
        case .save: return 14
        case .rollback: return 3
        case .reset: return 2
        case .refreshDiscarding: return 4
        case .refreshMerging: return 3
        case .refreshAll: return 2
        }
    }
}

/// A random walk of operations on several contexts, checked against `ContextOracle` after every step.
private final class ContextSimulation {
    let seed: UInt64
    var random: SeededRandom
    let coordinators: [PersistentStoreCoordinator]
    let contexts: [ManagedObjectContext]
    var oracle: ContextOracle
    var step = 0
    var operation = "setup"
    var trace: [String] = []
    var failures = 0
    var nextNumber = 0
    let places = ["Sandwich", "Anchorage", "Tonga", "Lima", ""]

    /// Children that saved objects with temporary IDs (their parents then save only while they are clean).
    var savedTemporaryIDs: Set<Int> = []
    /// Children to refresh after their parent's save (see the file comment).
    var childrenToRefresh: [Int] = []

    /// Contexts on `coordinators[contextCoordinators[i]]`, or children of `contexts[parents[i]]`.
    init(seed: UInt64, coordinators: [PersistentStoreCoordinator], contextCoordinators: [Int], parents: [Int?]? = nil) {
        let parents = parents ?? contextCoordinators.map { _ in nil }
        self.seed = seed
        self.random = SeededRandom(seed: seed)
        self.coordinators = coordinators
        var contexts: [ManagedObjectContext] = []
        for (index, coordinatorIndex) in contextCoordinators.enumerated() {
            let context = ManagedObjectContext(.privateQueue)
            if let parent = parents[index] {
                precondition(parent < index, "parents come first")
                context.parent = contexts[parent]
            } else {
                context.persistentStoreCoordinator = coordinators[coordinatorIndex]
            }
            context.name = "model-\(index)"
            contexts.append(context)
        }
        self.contexts = contexts
        self.oracle = ContextOracle(parents: parents)
    }

    func isParent(_ index: Int) -> Bool { oracle.parents.contains(index) }
    func isChild(_ index: Int) -> Bool { oracle.parents[index] != nil }

    func run(steps: Int) {
        for number in 1...steps {
            step = number
            let index = random.next(below: contexts.count)
            var kind = pickOperation()
            // Keep the graph small enough that long (stress) runs stay fast and keep churning.
            if kind == .insertQuake, oracle.quakeView(of: index).count > 120, random.chance(0.6) { kind = .deleteQuake }
            operation = "\(kind.rawValue) on context \(index)"
            do {
                try contexts[index].performAndWait { try perform(kind, in: index) }
            } catch {
                fail("threw \(error)")
            }
            for child in childrenToRefresh {
                contexts[child].performAndWait { contexts[child].refreshAllObjects() }
                savedTemporaryIDs.remove(child)
                operation += " (then refreshAllObjects on child \(child))"
            }
            childrenToRefresh = []
            trace.append("\(step): \(operation)")
            if trace.count > 12 { trace.removeFirst() }
            if failures > 0 { return }
            checkView(of: index)
            if kind == .save {
                for other in contexts.indices where other != index { checkView(of: other) }
                if !isChild(index) { for coordinatorIndex in coordinators.indices { checkFreshContext(on: coordinatorIndex) } }
            }
            if failures > 0 { return }
        }
        operation = "final save of every context"
        // Children first, so their changes reach the store with their parents' saves.
        for index in contexts.indices.sorted(by: { (isChild($0) ? 0 : 1) < (isChild($1) ? 0 : 1) }) {
            do { try contexts[index].performAndWait { try contexts[index].save() } } catch { fail("threw \(error)") }
            oracle.save(index)
        }
        for coordinatorIndex in coordinators.indices { checkFreshContext(on: coordinatorIndex) }
    }

    private func pickOperation() -> ContextOperation {
        let total = ContextOperation.allCases.reduce(0) { $0 + $1.weight }
        var roll = random.next(below: total)
        for kind in ContextOperation.allCases {
            if roll < kind.weight { return kind }
            roll -= kind.weight
        }
        return .insertQuake
    }

    func fail(_ message: String, file: StaticString = #filePath, line: UInt = #line) {
        failures += 1
        XCTFail("""
            seed \(seed), step \(step), \(operation): \(message)
              replay with STRATA_SEED=\(seed); last operations: \(trace.joined(separator: "; "))
            """, file: file, line: line)
    }

    // MARK: Operations (on the context's queue)

    private func perform(_ kind: ContextOperation, in index: Int) throws {
        let context = contexts[index]
        let ownCodes = oracle.quakeView(of: index).keys.filter { oracle.owner[$0] == index }.sorted()
        let ownRegions = oracle.regionView(of: index).filter { oracle.owner[$0] == index }.sorted()
        if isParent(index), [.rollback, .reset, .refreshDiscarding].contains(kind) {
            operation += " (a parent: refreshAll instead)"
            return try perform(.refreshAll, in: index)
        }
        switch kind {
        case .insertQuake:
            nextNumber += 1
            let code = "q\(nextNumber)"
            let state = QuakeState(magnitude: Double(random.next(below: 80)) / 10 + 1,
                                   place: places[random.next(below: places.count)],
                                   region: !ownRegions.isEmpty && random.chance(0.4) ? ownRegions[random.next(below: ownRegions.count)] : nil)
            operation += " (\(code) = \(state))"
            let quake = Quake(context: context)
            quake.code = code
            quake.magnitude = state.magnitude
            quake.place = state.place
            if let name = state.region { quake.region = try region(named: name, in: context) }
            oracle.owner[code] = index
            oracle.setQuake(code, state, in: index)
        case .insertRegion:
            nextNumber += 1
            let name = "r\(nextNumber)"
            operation += " (\(name))"
            let region = Region(context: context)
            region.name = name
            oracle.owner[name] = index
            oracle.setRegion(name, exists: true, in: index)
        case .updateMagnitude, .updatePlace, .deleteQuake, .setRegion, .clearRegion:
            guard !ownCodes.isEmpty else { return try perform(.insertQuake, in: index) }
            let code = ownCodes[random.next(below: ownCodes.count)]
            try change(code, kind, in: index, ownRegions: ownRegions)
        case .deleteRegion:
            guard !ownRegions.isEmpty else { return try perform(.insertRegion, in: index) }
            let name = ownRegions[random.next(below: ownRegions.count)]
            operation += " (\(name))"
            context.delete(try region(named: name, in: context))
            oracle.setRegion(name, exists: false, in: index)
            for (code, state) in oracle.quakeView(of: index) where state.region == name {
                var changed = state
                changed.region = nil
                oracle.setQuake(code, changed, in: index)
            }
        case .save:
            let waiting = contexts.indices.filter { oracle.parents[$0] == index && savedTemporaryIDs.contains($0) && oracle.hasPending[$0] }
            if !waiting.isEmpty {
                operation += " (deferred: child \(waiting) has unsaved changes to temporary-ID objects)"
                return try perform(.refreshAll, in: index)
            }
            var temporary = false
            if isChild(index) {
                if random.chance(0.5) {
                    try context.obtainPermanentIDs(for: Array(context.insertedObjects))
                } else if !context.insertedObjects.isEmpty {
                    temporary = true
                    savedTemporaryIDs.insert(index)
                    operation += " (with temporary IDs)"
                }
            }
            try context.save()
            oracle.save(index)
            checkAfterSave(of: index, temporaryIDsAllowed: temporary || savedTemporaryIDs.contains(index))
            childrenToRefresh = contexts.indices.filter { oracle.parents[$0] == index && savedTemporaryIDs.contains($0) }
        case .rollback:
            context.rollback()
            oracle.discard(index)
        case .reset:
            context.reset()
            oracle.discard(index)
        case .refreshDiscarding:
            try refreshDiscarding(in: index)
        case .refreshMerging:
            let quakes = try fetchQuakes(in: context).sorted { $0.key < $1.key }
            guard !quakes.isEmpty else { return }
            let (code, quake) = quakes[random.next(below: quakes.count)]
            operation += " (\(code))"
            context.refresh(quake, mergeChanges: true)
            if let region = quake.region, random.chance(0.5) { context.refresh(region, mergeChanges: true) }
        case .refreshAll:
            context.refreshAllObjects()
        }
    }

    private func change(_ code: String, _ kind: ContextOperation, in index: Int, ownRegions: [String]) throws {
        let context = contexts[index]
        guard let quake = try fetchQuakes(in: context)[code], var state = oracle.quakeView(of: index)[code] else {
            return fail("own quake \(code) is missing from a fetch with pending changes")
        }
        defer { if kind != .deleteQuake { oracle.setQuake(code, state, in: index) } }
        switch kind {
        case .updateMagnitude:
            let magnitude = Double(random.next(below: 80)) / 10 + 1
            operation += " (\(code).magnitude = \(magnitude))"
            quake.magnitude = magnitude
            state.magnitude = magnitude
        case .updatePlace:
            let place = places[random.next(below: places.count)]
            operation += " (\(code).place = \"\(place)\")"
            quake.place = place
            state.place = place
        case .deleteQuake:
            operation += " (\(code))"
            context.delete(quake)
            oracle.setQuake(code, nil, in: index)
        case .setRegion:
            guard !ownRegions.isEmpty else { return try perform(.insertRegion, in: index) }
            let name = ownRegions[random.next(below: ownRegions.count)]
            operation += " (\(code).region = \(name))"
            quake.region = try region(named: name, in: context)
            state.region = name
        default:
            operation += " (\(code).region = nil)"
            quake.region = nil
            state.region = nil
        }
    }

    /// refresh(_, mergeChanges: false) on a random quake the context sees: the quake falls back to
    /// the context's base (parent or store). Discarding a quake's own relationship change would leave
    /// its region's side changed (Core Data behaves the same), so own quakes whose region changed get
    /// a merging refresh instead.
    private func refreshDiscarding(in index: Int) throws {
        let context = contexts[index]
        let quakes = try fetchQuakes(in: context).sorted { $0.key < $1.key }
        guard !quakes.isEmpty else { return }
        let view = oracle.quakeView(of: index), base = oracle.baseQuakes(of: index)
        // Half the time, a quake whose unsaved changes the refresh really discards.
        let discardable = quakes.filter { code, _ in
            guard oracle.owner[code] == index, let saved = base[code], let current = view[code] else { return false }
            return current != saved && current.region == saved.region
        }
        let pool = !discardable.isEmpty && random.chance(0.5) ? discardable : quakes
        let (code, quake) = pool[random.next(below: pool.count)]
        operation += " (\(code))"
        if oracle.owner[code] == index, let saved = base[code] {
            guard view[code]?.region == saved.region else {
                context.refresh(quake, mergeChanges: true)
                return
            }
            context.refresh(quake, mergeChanges: false)
            oracle.pendingQuakes[index].removeValue(forKey: code)
        } else {
            // Another owner's quake (never changed here), or an own unsaved insert (a no-op).
            context.refresh(quake, mergeChanges: false)
            if oracle.owner[code] == index, quake.isFault { fail("refresh(_:mergeChanges: false) turned inserted \(code) into a fault") }
        }
    }

    // MARK: Fetch helpers (on the context's queue)

    private func fetchQuakes(in context: ManagedObjectContext, pending: Bool = true) throws -> [String: Quake] {
        let request = FetchRequest<Quake>(entityName: "Quake")
        request.includesPendingChanges = pending
        var result: [String: Quake] = [:]
        for quake in try context.fetch(request) {
            if result.updateValue(quake, forKey: quake.code) != nil { fail("fetch returned quake \(quake.code) twice") }
        }
        return result
    }

    private func fetchRegions(in context: ManagedObjectContext) throws -> [String: Region] {
        var result: [String: Region] = [:]
        for region in try context.fetch(FetchRequest<Region>(entityName: "Region")) {
            if result.updateValue(region, forKey: region.name) != nil { fail("fetch returned region \(region.name) twice") }
        }
        return result
    }

    private func region(named name: String, in context: ManagedObjectContext) throws -> Region {
        guard let region = try fetchRegions(in: context)[name] else {
            throw StrataError(.objectNotFound, "own region \(name) is missing from a fetch with pending changes")
        }
        return region
    }

    private func state(of quake: Quake) -> QuakeState {
        QuakeState(magnitude: quake.magnitude, place: quake.place, region: quake.region?.name)
    }

    // MARK: Checks

    /// Right after a successful save, on the context's queue.
    private func checkAfterSave(of index: Int, temporaryIDsAllowed: Bool) {
        let context = contexts[index]
        if context.hasChanges { fail("context still has changes after save()") }
        // A child that saved without permanent IDs keeps its temporary ones (as Core Data).
        guard !temporaryIDsAllowed else { return }
        for object in context.registeredObjects where object.objectID.isTemporaryID && !object.isDeleted {
            fail("\(object.objectID) still has a temporary ID after save()")
        }
    }

    /// What context `index` sees, with and without its pending changes.
    func checkView(of index: Int) {
        let context = contexts[index]
        let expected = oracle.quakeView(of: index)
        do {
            try context.performAndWait {
                let quakes = try fetchQuakes(in: context)
                if Set(quakes.keys) != Set(expected.keys) {
                    return fail("context \(index) fetches quakes \(quakes.keys.sorted()), oracle \(expected.keys.sorted())")
                }
                for (code, quake) in quakes.sorted(by: { $0.key < $1.key }) {
                    let wasFault = quake.isFault
                    let own = oracle.owner[code] == index
                    // Another owner's object may be stale; a child's faults load from its parent's
                    // (possibly stale) objects, so only a root's faults must show the store.
                    guard own || (wasFault && !isChild(index)) else { continue }
                    let actual = state(of: quake)
                    if actual != expected[code] {
                        fail("context \(index) sees \(code) = \(actual), oracle \(expected[code]!) (\(own ? "own" : "fetched as fault"))")
                    }
                }
                try checkOwnRegions(in: index)
                let request = FetchRequest<Quake>(entityName: "Quake")
                let count = try context.count(for: request)
                if count != expected.count { fail("context \(index) counts \(count) quakes, oracle \(expected.count)") }
                // Without pending changes: the store, or for a child the parent's view.
                request.includesPendingChanges = false
                let base = oracle.baseQuakes(of: index)
                let stored = try context.count(for: request)
                if stored != base.count {
                    fail("context \(index) counts \(stored) quakes without pending changes, oracle \(base.count)")
                }
                let storedCodes = Set(try fetchQuakes(in: context, pending: false).keys)
                if storedCodes != Set(base.keys) {
                    fail("context \(index) fetches \(storedCodes.sorted()) without pending changes, oracle \(base.keys.sorted())")
                }
                if oracle.hasDifferences(index) && !context.hasChanges {
                    fail("context \(index) has unsaved changes by the oracle but hasChanges is false")
                }
            }
        } catch {
            fail("checking context \(index) threw \(error)")
        }
    }

    /// Own regions exist as the oracle says and hold exactly the own quakes that point at them.
    private func checkOwnRegions(in index: Int) throws {
        let context = contexts[index]
        let regions = try fetchRegions(in: context)
        let expectedNames = oracle.regionView(of: index)
        if Set(regions.keys) != expectedNames {
            return fail("context \(index) fetches regions \(regions.keys.sorted()), oracle \(expectedNames.sorted())")
        }
        let view = oracle.quakeView(of: index)
        for name in expectedNames.filter({ oracle.owner[$0] == index }).sorted() {
            let members = Set(regions[name]!.quakes.map(\.code))
            let expected = Set(view.filter { $0.value.region == name }.keys)
            if members != expected {
                fail("context \(index): own region \(name).quakes = \(members.sorted()), oracle \(expected.sorted())")
            }
        }
    }

    /// A new context on the coordinator sees exactly the committed state, with consistent inverses.
    func checkFreshContext(on coordinatorIndex: Int) {
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinators[coordinatorIndex]
        let label = "a fresh context on coordinator \(coordinatorIndex)"
        do {
            try context.performAndWait {
                let quakes = try fetchQuakes(in: context)
                let actual = quakes.mapValues(state(of:))
                if actual != oracle.committedQuakes {
                    let codes = Set(actual.keys).union(oracle.committedQuakes.keys).sorted()
                    let differences = codes.filter { actual[$0] != oracle.committedQuakes[$0] }.prefix(5).map {
                        "\($0): \(actual[$0].map(\.description) ?? "absent") vs oracle \(oracle.committedQuakes[$0].map(\.description) ?? "absent")"
                    }
                    fail("\(label) sees \(actual.count) quakes, oracle \(oracle.committedQuakes.count); first differences: \(differences.joined(separator: "; "))")
                }
                let regions = try fetchRegions(in: context)
                if Set(regions.keys) != oracle.committedRegions {
                    fail("\(label) sees regions \(regions.keys.sorted()), oracle \(oracle.committedRegions.sorted())")
                }
                try checkInverses(quakes: quakes, regions: regions, label: label)
                let count = try context.count(for: FetchRequest<Quake>(entityName: "Quake"))
                if count != oracle.committedQuakes.count { fail("\(label) counts \(count) quakes, oracle \(oracle.committedQuakes.count)") }
            }
        } catch {
            fail("checking \(label) threw \(error)")
        }
    }

    /// Every quake's region lists it; every region's quakes point back at it; memberships match the oracle.
    private func checkInverses(quakes: [String: Quake], regions: [String: Region], label: String) throws {
        for (code, quake) in quakes.sorted(by: { $0.key < $1.key }) {
            guard let region = quake.region else { continue }
            if !region.quakes.contains(quake) {
                fail("\(label): \(code).region = \(region.name), but \(region.name).quakes = \(region.quakes.map(\.code).sorted())")
            }
        }
        for (name, region) in regions.sorted(by: { $0.key < $1.key }) {
            for quake in region.quakes where quake.region !== region {
                fail("\(label): \(name).quakes contains \(quake.code), whose region is \(quake.region?.name ?? "nil")")
            }
            let members = Set(region.quakes.map(\.code))
            let expected = Set(oracle.committedQuakes.filter { $0.value.region == name }.keys)
            if members != expected { fail("\(label): \(name).quakes = \(members.sorted()), oracle \(expected.sorted())") }
        }
    }
}
