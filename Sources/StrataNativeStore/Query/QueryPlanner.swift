// QueryPlanner: turns a fetch plan's predicate and order into an access path over the indexes a
// store keeps: index range scans for equality, IN and range conditions (compound indexes take an
// equality prefix and one range), index order instead of sorting, early stop at the limit, and a
// residual predicate for whatever the index does not answer exactly.
//
// Owns: which conditions an index can answer and how exactly (`IndexCondition`), the choice of
// index, and the access path's description for `explain`. It sees indexes only as names, element
// properties and element kinds, so it serves any store. Invariant: the rows an access path
// yields, filtered by its residual, are exactly the rows the predicate selects. Never reads rows.

import Foundation
import StrataGraph

/// An index as the planner sees it (a class: access paths hold it, one retain to copy): the
/// index's layout, which a fetch planned on it walks, with facts about the entity it was made for.
final class IndexCandidate: Sendable {
    let layout: IndexLayout
    var name: String { layout.name }
    var elements: [String] { layout.elementNames }
    var kinds: [KeyElementKind] { layout.kinds }
    var isUnique: Bool { layout.isUnique }
    /// The entity whose rows (and subentities' rows) the index holds.
    var declaringEntity: String { layout.declaringEntity }
    /// Text and data elements longer than this many bytes are cut in keys.
    var textCap: Int { layout.cap }
    // Facts about the entity whose fetches may use this candidate (candidates are made per
    // entity), so planning a fetch reads no property of the entity itself: the model's
    // properties are read through dynamic exclusivity checks from this module.
    /// Per element, the type of the attribute it names (nil: not a stored attribute).
    let elementTypes: [AttributeDescription.AttributeType?]
    /// Whether the entity declares the index (its rows and every subentity's are in it).
    let isDeclaredByEntity: Bool
    /// How many kinds the entity has: itself and its subentities.
    let entityKindCount: Int

    /// The candidate of `layout`, an index of `entity`'s layout.
    init(_ layout: IndexLayout, for entity: EntityDescription) {
        self.layout = layout
        self.elementTypes = layout.elementNames.map { element in
            guard let slot = entity.slotIndex[element], let attribute = entity.slots[slot] as? AttributeDescription,
                  !attribute.isTransient else { return nil }
            return attribute.attributeType
        }
        self.isDeclaredByEntity = layout.declaringEntity == entity.name
        self.entityKindCount = entity.kindNames.count
    }
}

/// One end of a range on an index element.
struct IndexBound: Sendable, Hashable {
    var value: PredicateValue
    var inclusive: Bool
}

/// How a fetch reaches its rows.
struct AccessPath: Sendable {
    /// The index scanned, or nil for a scan of every row.
    var index: IndexCandidate?
    /// Values each leading index element must equal (several for IN; ranges are their product).
    var equalities: [[PredicateValue]] = []
    /// A range on the element after the equalities (nil ends are open; non-nil values only).
    var lower: IndexBound?
    var upper: IndexBound?
    /// The element after the equalities must begin with this text.
    var prefix: String?
    /// The element after the equalities is constrained (so nil keys are skipped).
    var rangesNextElement = false
    /// Scan the index backwards (a descending order it provides).
    var reverse = false
    /// The index yields rows in the requested order (no sort needed).
    var providesOrder = false
    /// Entries of other entities than the fetched ones must be skipped.
    var filtersEntities = false
    /// What still has to be evaluated on each row (nil: the access path is exact).
    var residual: FetchPredicate?
    /// How many sort keys the index order covers (ties beyond them are ordered by key).
    var orderedElements = 0

    var isIndexScan: Bool { index != nil }

    /// At most one index entry is in the path's range: a unique index with every element equal
    /// to one value that is not nil (nils repeat in a unique index), and nothing left to check
    /// (an inexact equality, such as a text cut to the index's cap, always leaves a residual).
    var isPointLookup: Bool {
        // Tested case by case, by pattern: comparing the optional bounds and values with `==`
        // copied each of them first (about 650 instructions per call).
        guard let index, index.isUnique, !rangesNextElement, equalities.count == index.elements.count else { return false }
        if case .some = residual { return false }
        if case .some = lower { return false }
        if case .some = upper { return false }
        if case .some = prefix { return false }
        for values in equalities {
            guard values.count == 1 else { return false }
            if case .null = values[0] { return false }
        }
        return true
    }
}

enum QueryPlanner {
    /// The access path for `plan` over `indexes` (those covering the fetched entity).
    /// `shortcuts` false skips the point-lookup fast path (tests compare the two).
    static func accessPath(for plan: FetchPlan, indexes: [IndexCandidate], shortcuts: Bool = true) -> AccessPath {
        if shortcuts, let lookup = uniqueEqualityPath(for: plan, indexes: indexes) { return lookup }
        let conjuncts = conjunctsOf(plan.predicate)
        let conditions = conjuncts.enumerated().compactMap { IndexCondition(conjunct: $1, position: $0, entity: plan.entity) }
        // The best path so far and its score (kept apart: reading the score of an optional tuple
        // copied the whole path, retains and all, once per candidate).
        var best: AccessPath?
        var bestScore = Int.min
        let firstSortKey = plan.limit > 0 ? plan.sortDescriptors.first?.key : nil
        // An index helps only through its first element: a condition on it, or (with a limit) the
        // order it gives.
        for index in indexes where index.elements[0] == firstSortKey || conditions.contains(where: { $0.attribute == index.elements[0] }) {
            guard covers(index, plan) else { continue }
            var candidate = path(over: index, conditions: conditions, conjuncts: conjuncts, plan: plan)
            var score = candidate.equalities.count * 4 + (candidate.rangesNextElement ? 2 : 0)
            if index.isUnique && candidate.equalities.count == index.elements.count && candidate.equalities.allSatisfy({ $0.count == 1 }) { score += 100 }
            if candidate.providesOrder && plan.limit > 0 { score += 3 }
            if score == 0 && !(candidate.providesOrder && plan.limit > 0) { continue }
            if candidate.providesOrder { score += 1 }
            if score > bestScore {
                candidate.filtersEntities = filtersEntities(index, plan)
                bestScore = score
                best = consume candidate
            }
        }
        return best ?? AccessPath(residual: plan.predicate)
    }

    /// The access path for reading the IDs of the rows `plan` selects with a few of their values:
    /// the usual one, or, when that scans the rows and the plan has no predicate, a scan of an
    /// index that gives the plan's order and that `readsBack` accepts (its keys hold every value
    /// wanted): an index-only scan, which reads no row.
    static func projectionPath(for plan: FetchPlan, indexes: [IndexCandidate], readsBack: (IndexCandidate) -> Bool) -> AccessPath {
        let usual = accessPath(for: plan, indexes: indexes)
        guard !usual.isIndexScan, plan.predicate == nil else { return usual }
        for index in indexes where covers(index, plan) && readsBack(index) {
            var candidate = path(over: index, conditions: [], conjuncts: [], plan: plan)
            guard candidate.providesOrder || plan.sortDescriptors.isEmpty else { continue }
            candidate.filtersEntities = filtersEntities(index, plan)
            return candidate
        }
        return usual
    }

    /// The point lookup, `key == constant` alone on an attribute with a unique single-element
    /// index, planned without the general search's arrays. Returns exactly the path the general
    /// search chooses (an exact equality on a whole unique index outscores any other path, and
    /// the first such index wins), or nil to leave the predicate to it.
    static func uniqueEqualityPath(for plan: FetchPlan, indexes: [IndexCandidate]) -> AccessPath? {
        guard let predicate = plan.predicate, case .comparison(let comparison) = predicate.node else { return nil }
        if comparison.operator == .equalTo { return keyEqualsConstantPath(comparison, plan: plan, indexes: indexes) }
        guard comparison.operator == .in,
              let condition = IndexCondition(conjunct: predicate, position: 0, entity: plan.entity),
              condition.isEquality else { return nil }
        for index in indexes where index.isUnique && index.elements.count == 1 && index.elements[0] == condition.attribute {
            let kind = index.kinds[0]
            guard covers(index, plan), condition.fits(kind) else { continue }
            guard let equal = condition.equalValues(for: kind), equal.values.count == 1, equal.values[0] != .null, equal.exact,
                  condition.exact(for: kind, cap: index.textCap) else { return nil }
            // No order to take from the index: every element is fixed, so at most one row comes.
            var path = AccessPath(index: index, equalities: [equal.values])
            path.filtersEntities = filtersEntities(index, plan)
            return path
        }
        return nil
    }

    /// `uniqueEqualityPath` for `key == constant` (either side), the usual lookup: the same tests
    /// as building an `IndexCondition` and asking it `fits`, `equalValues` and `exact`, without
    /// the condition's arrays, and the attribute looked up only once a unique index on it is
    /// found (most predicates have none).
    private static func keyEqualsConstantPath(_ comparison: PredicateComparison, plan: FetchPlan, indexes: [IndexCandidate]) -> AccessPath? {
        guard comparison.modifier == .direct, comparison.options.subtracting(.normalized).isEmpty else { return nil }
        let keyExpression: FetchExpression, value: PredicateValue
        switch (comparison.left, comparison.right) {
        case (.keyPath, .constant(let constant)): (keyExpression, value) = (comparison.left, constant)
        case (.constant(let constant), .keyPath): (keyExpression, value) = (comparison.right, constant)
        default: return nil
        }
        guard case .keyPath(.evaluatedObject, let path) = keyExpression, path.count == 1, case .key(let key) = path[0],
              value != .null,
              let first = indexes.firstIndex(where: { $0.isUnique && $0.elements.count == 1 && $0.elements[0] == key }),
              let type = indexes[first].elementTypes[0] else { return nil }
        for index in indexes[first...] where index.isUnique && index.elements.count == 1 && index.elements[0] == key {
            let kind = index.kinds[0]
            guard covers(index, plan), let (converted, lossless) = IndexCondition.normalized(value, kind: kind, type: type) else { continue }
            // A lossy constant (4.5 for an integer, a decimal) or one longer than keys keep is
            // not an exact lookup: the general search narrows a scan with it.
            guard lossless, kind.isExactlyOrdered, kind == .integer || !IndexCondition.isCut(value, cap: index.textCap) else { return nil }
            var path = AccessPath(index: index, equalities: [[converted]])
            path.filtersEntities = filtersEntities(index, plan)
            return path
        }
        return nil
    }

    /// Whether a scan of `index` must skip entries of entities the fetch does not want.
    private static func filtersEntities(_ index: IndexCandidate, _ plan: FetchPlan) -> Bool {
        // Fetching the declaring entity with its subentities takes every entry.
        let everyKind = index.isDeclaredByEntity && plan.entityNames.count == index.entityKindCount
        return !everyKind && plan.entityNames != plan.entity.managedObjectModel?.entitiesByName[index.declaringEntity]?.kindNames
    }

    private static func covers(_ index: IndexCandidate, _ plan: FetchPlan) -> Bool {
        // The fetched kinds are the declaring entity and some of its subentities.
        if index.isDeclaredByEntity { return true }
        guard let declaring = plan.entity.managedObjectModel?.entitiesByName[index.declaringEntity] else { return false }
        return plan.entityNames.isSubset(of: declaring.kindNames)
    }

    /// The top-level conjuncts of a predicate.
    static func conjunctsOf(_ predicate: FetchPredicate?) -> [FetchPredicate] {
        guard let predicate else { return [] }
        if case .and(let parts) = predicate.node { return parts.flatMap { conjunctsOf($0) } }
        return [predicate]
    }

    /// The best use of one index: an equality prefix, then one range, then order.
    private static func path(over index: IndexCandidate, conditions: [IndexCondition], conjuncts: [FetchPredicate], plan: FetchPlan) -> AccessPath {
        var path = AccessPath(index: index)
        // Conjunct positions the index answers, and those it answers only in part.
        var used = ConjunctSet()
        var inexact = ConjunctSet()
        for (position, element) in index.elements.enumerated() {
            let kind = index.kinds[position]
            if let equal = conditions.first(where: { $0.attribute == element && $0.isEquality && $0.fits(kind) && !used.contains($0.position) }),
               let values = equal.equalValues(for: kind) {
                path.equalities.append(values.values)
                used.insert(equal.position)
                if !values.exact || !equal.exact(for: kind, cap: index.textCap) { inexact.insert(equal.position) }
                continue
            }
            for range in conditions where range.attribute == element && !range.isEquality && range.fits(kind) && !used.contains(range.position) {
                guard range.apply(to: &path, kind: kind, cap: index.textCap) else { continue }
                used.insert(range.position)
                if !range.exact(for: kind, cap: index.textCap) { inexact.insert(range.position) }
                path.rangesNextElement = true
            }
            break
        }
        orderFromIndex(&path, index: index, plan: plan)
        // The residual: every conjunct the index does not answer exactly (usually none or one).
        var residual: [FetchPredicate] = []
        for (position, conjunct) in conjuncts.enumerated() where !used.contains(position) || inexact.contains(position) {
            residual.append(conjunct)
        }
        path.residual = residual.isEmpty ? nil : (residual.count == 1 ? residual[0] : FetchPredicate(andPredicateWithSubpredicates: residual))
        return path
    }

    /// Whether the index order after the equality prefix is the requested order.
    private static func orderFromIndex(_ path: inout AccessPath, index: IndexCandidate, plan: FetchPlan) {
        let sorts = plan.sortDescriptors
        let start = path.equalities.count
        // The sort keys must be every element after the equalities: ties are then equal keys,
        // which the index keeps in primary-key order, as a stable sort of the rows would.
        guard !sorts.isEmpty, path.equalities.allSatisfy({ $0.count == 1 }), start + sorts.count == index.elements.count,
              sorts.allSatisfy({ $0.ascending == sorts[0].ascending }) else { return }
        for (offset, sort) in sorts.enumerated() {
            let position = start + offset
            let kind = index.kinds[position]
            guard index.elements[position] == sort.key, kind.isExactlyOrdered,
                  sort.comparison == .binary || kind != .text else { return }
        }
        path.providesOrder = true
        path.reverse = !sorts[0].ascending
        path.orderedElements = sorts.count
    }
}

/// A set of conjunct positions: bits for the first 64 (a predicate rarely has more), an array
/// beyond (no allocation in the usual case).
struct ConjunctSet {
    private var bits: UInt64 = 0
    private var more: [Int] = []

    func contains(_ position: Int) -> Bool {
        position < 64 ? bits & (1 << UInt64(position)) != 0 : more.contains(position)
    }

    mutating func insert(_ position: Int) {
        if position < 64 { bits |= 1 << UInt64(position) } else if !more.contains(position) { more.append(position) }
    }
}

/// A conjunct an index element can answer: `key op constant` over one attribute of the entity.
struct IndexCondition {
    enum Shape {
        case equal([PredicateValue])
        case notNil
        case lower(PredicateValue, inclusive: Bool)
        case upper(PredicateValue, inclusive: Bool)
        case between(PredicateValue, PredicateValue)
        case prefix(String)
    }
    let attribute: String
    let shape: Shape
    let position: Int
    let attributeType: AttributeDescription.AttributeType

    var isEquality: Bool { if case .equal = shape { return true }; return false }

    init?(conjunct: FetchPredicate, position: Int, entity: EntityDescription) {
        guard case .comparison(let comparison) = conjunct.node, comparison.modifier == .direct,
              comparison.options.subtracting(.normalized).isEmpty else { return nil }
        var op = comparison.operator
        var keyExpression = comparison.left, constantExpression = comparison.right
        if case .constant = comparison.left, case .keyPath = comparison.right {
            (keyExpression, constantExpression) = (comparison.right, comparison.left)
            switch op {
            case .lessThan: op = .greaterThan
            case .lessThanOrEqualTo: op = .greaterThanOrEqualTo
            case .greaterThan: op = .lessThan
            case .greaterThanOrEqualTo: op = .lessThanOrEqualTo
            case .equalTo, .notEqualTo: break
            default: return nil
            }
        }
        guard case .keyPath(.evaluatedObject, let path) = keyExpression, path.count == 1, case .key(let key) = path[0],
              let slot = entity.slotIndex[key], let attribute = entity.slots[slot] as? AttributeDescription,
              !attribute.isTransient else { return nil }
        self.attribute = key
        self.position = position
        self.attributeType = attribute.attributeType
        switch (op, constantExpression) {
        case (.equalTo, .constant(let value)): shape = .equal([value])
        case (.notEqualTo, .constant(.null)): shape = .notNil
        case (.greaterThan, .constant(let value)) where value != .null: shape = .lower(value, inclusive: false)
        case (.greaterThanOrEqualTo, .constant(let value)) where value != .null: shape = .lower(value, inclusive: true)
        case (.lessThan, .constant(let value)) where value != .null: shape = .upper(value, inclusive: false)
        case (.lessThanOrEqualTo, .constant(let value)) where value != .null: shape = .upper(value, inclusive: true)
        case (.in, let right):
            guard let values = right.aggregateConstants else { return nil }
            shape = .equal(values)
        case (.between, let right):
            guard let values = right.aggregateConstants, values.count == 2, !values.contains(.null) else { return nil }
            shape = .between(values[0], values[1])
        case (.beginsWith, .constant(.string(let text))) where !text.isEmpty: shape = .prefix(text)
        default: return nil
        }
    }

    /// Whether the constants can be compared with keys of `kind` (else the evaluator decides,
    /// and may report a type mismatch).
    func fits(_ kind: KeyElementKind) -> Bool {
        func ok(_ value: PredicateValue) -> Bool { IndexCondition.normalized(value, kind: kind, type: attributeType) != nil }
        switch shape {
        case .equal(let values): return values.allSatisfy { $0 == .null || ok($0) }
        case .notNil: return true
        case .lower(let v, _), .upper(let v, _): return ok(v)
        case .between(let a, let b): return ok(a) && ok(b)
        case .prefix: return kind == .text && attributeType == .string
        }
    }

    /// The equality values in the key kind (sorted, duplicates removed), and whether converting
    /// them lost nothing. Values that can never match (4.5 for an integer) are dropped.
    func equalValues(for kind: KeyElementKind) -> (values: [PredicateValue], exact: Bool)? {
        guard case .equal(let values) = shape else { return nil }
        var result: [PredicateValue] = []
        var exact = true
        for value in values {
            if value == .null { result.append(.null); continue }
            guard let (converted, lossless) = IndexCondition.normalized(value, kind: kind, type: attributeType) else { return nil }
            if !lossless {
                if kind == .integer { continue }   // a fraction never equals an integer
                exact = false
            }
            result.append(converted)
        }
        if result.count < 2 { return (result, exact) }
        var seen: Set<PredicateValue> = []
        return (result.filter { seen.insert($0).inserted }, exact)
    }

    /// Narrows `path`'s range on its next element; false if this condition cannot.
    func apply(to path: inout AccessPath, kind: KeyElementKind, cap: Int) -> Bool {
        func bound(_ value: PredicateValue, inclusive: Bool, isLower: Bool) -> IndexBound? {
            guard let (converted, lossless) = IndexCondition.normalized(value, kind: kind, type: attributeType) else { return nil }
            if !lossless, kind == .integer, case .double(let d) = value {
                // x > 4.5 is x >= 5; x < 4.5 is x <= 4.
                return IndexBound(value: .integer(Int64(isLower ? d.rounded(.up) : d.rounded(.down))), inclusive: true)
            }
            let cut = IndexCondition.isCut(value, cap: cap)
            return IndexBound(value: converted, inclusive: lossless && !cut ? inclusive : true)
        }
        switch shape {
        case .equal: return false
        case .notNil: return path.lower == nil && path.upper == nil && path.prefix == nil
        case .prefix(let text):
            guard path.prefix == nil else { return false }
            path.prefix = text
            return true
        case .lower(let value, let inclusive):
            guard let new = bound(value, inclusive: inclusive, isLower: true) else { return false }
            path.lower = IndexCondition.tighter(path.lower, new, lower: true)
        case .upper(let value, let inclusive):
            guard let new = bound(value, inclusive: inclusive, isLower: false) else { return false }
            path.upper = IndexCondition.tighter(path.upper, new, lower: false)
        case .between(let low, let high):
            guard let a = bound(low, inclusive: true, isLower: true), let b = bound(high, inclusive: true, isLower: false) else { return false }
            path.lower = IndexCondition.tighter(path.lower, a, lower: true)
            path.upper = IndexCondition.tighter(path.upper, b, lower: false)
        }
        return true
    }

    /// Whether this condition is answered exactly by keys of `kind` (text longer than the key
    /// cap is cut in keys, so such constants only narrow the scan).
    func exact(for kind: KeyElementKind, cap: Int) -> Bool {
        guard kind.isExactlyOrdered else { return false }
        func lossless(_ value: PredicateValue) -> Bool {
            if value == .null || kind == .integer { return true }
            return (IndexCondition.normalized(value, kind: kind, type: attributeType)?.1 ?? false) && !IndexCondition.isCut(value, cap: cap)
        }
        switch shape {
        case .prefix: return false   // grapheme boundaries may differ from byte prefixes
        case .notNil: return true
        case .equal(let values): return values.allSatisfy(lossless)
        case .lower(let v, _), .upper(let v, _): return lossless(v)
        case .between(let a, let b): return lossless(a) && lossless(b)
        }
    }

    /// Whether a text or data constant is longer than keys keep.
    static func isCut(_ value: PredicateValue, cap: Int) -> Bool {
        switch value {
        case .string(let text):
            // Canonical composition at most triples UTF-8 (UAX #15), so a short text always fits;
            // ASCII is its own canonical form: its length is its key length.
            let count = text.utf8.count
            if count * 3 <= cap { return false }
            if count <= cap && text.utf8.allSatisfy({ $0 < 0x80 }) { return false }
            return KeyEncoding.textBytes(of: .string(text)).count > cap
        case .data(let data): return data.count > cap
        default: return false
        }
    }

    private static func tighter(_ current: IndexBound?, _ new: IndexBound, lower: Bool) -> IndexBound {
        guard let current, let order = PredicateOrdering.compare(current.value, new.value, options: []) else { return new }
        switch order {
        case .orderedSame: return IndexBound(value: new.value, inclusive: current.inclusive && new.inclusive)
        case .orderedAscending: return lower ? new : current
        case .orderedDescending: return lower ? current : new
        }
    }

    /// A constant in the form keys of `kind` are built from, and whether nothing was lost; nil
    /// when the constant cannot be compared with the attribute through an index.
    static func normalized(_ value: PredicateValue, kind: KeyElementKind, type: AttributeDescription.AttributeType) -> (PredicateValue, Bool)? {
        switch (kind, value) {
        case (.integer, .integer): return (value, true)
        case (.integer, .double(let d)):
            guard d.isFinite, abs(d) < 9.0e18 else { return nil }
            return d == d.rounded() ? (.integer(Int64(d)), true) : (value, false)
        case (.real, .date) where type == .date: return (value, true)
        case (.real, .integer(let i)) where type != .date: return (.double(Double(i)), abs(i) <= 1 << 53)
        case (.real, .double) where type != .date: return (value, true)
        case (.boolean, .bool): return (value, true)
        case (.boolean, .integer(let i)) where i == 0 || i == 1: return (.bool(i == 1), true)
        case (.text, .string) where type == .string: return (value, true)
        case (.uuid, .uuid): return (value, true)
        case (.bytes, .data) where type == .binaryData: return (value, true)
        case (.decimal, .decimal), (.decimal, .integer), (.decimal, .double): return (value, false)
        default: return nil
        }
    }
}
