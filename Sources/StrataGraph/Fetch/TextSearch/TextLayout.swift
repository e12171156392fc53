// TextLayout: which attributes of an entity hierarchy full-text search reads (every store: the
// native store's index, FORMAT.md §19.8, and the in-memory search of the others), and how a row
// becomes a document.
//
// Owns: the attribute numbering (the hierarchy's string attributes marked isIndexedBySpotlight,
// by name, sorted by their UTF-8 bytes) and, per entity, the slots that feed it. Never touches
// a store.

import StrataText

package struct TextLayout: Sendable {
    /// The hierarchy's root entity: the index's name.
    package let root: String
    /// The indexed attribute names, in number order.
    package let attributes: [String]
    /// Per entity of the hierarchy (by name): each indexed slot and its attribute number.
    package let slotsByEntity: [String: [(slot: Int, number: Int)]]

    /// The layout of `entity`'s hierarchy (all of the model's entities under its root), nil when
    /// it indexes no attribute.
    package static func layout(of entity: EntityDescription) -> TextLayout? {
        var root = entity
        while let parent = root.superentity { root = parent }
        var members: [EntityDescription] = []
        var pending = [root]
        while let next = pending.popLast() {
            members.append(next)
            pending += next.subentities
        }
        return layouts(for: members)[root.name]
    }

    /// The layouts of `entities`' hierarchies that index at least one attribute, by root name.
    package static func layouts(for entities: [EntityDescription]) -> [String: TextLayout] {
        var byRoot: [String: [EntityDescription]] = [:]
        for entity in entities {
            var root = entity
            while let parent = root.superentity { root = parent }
            byRoot[root.name, default: []].append(entity)
        }
        var result: [String: TextLayout] = [:]
        for (root, members) in byRoot {
            var names = Set<String>()
            for entity in members { for slot in entity.slots where isIndexed(slot) { names.insert(slot.name) } }
            guard !names.isEmpty else { continue }
            let attributes = names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            let numbers = Dictionary(uniqueKeysWithValues: attributes.enumerated().map { ($1, $0) })
            var slots: [String: [(slot: Int, number: Int)]] = [:]
            for entity in members {
                // In number order: a document's occurrences then come ascending as they are made.
                slots[entity.name] = entity.slots.enumerated().compactMap { index, slot in
                    isIndexed(slot) ? (index, numbers[slot.name]!) : nil
                }.sorted { $0.number < $1.number }
            }
            result[root] = TextLayout(root: root, attributes: attributes, slotsByEntity: slots)
        }
        return result
    }

    private static func isIndexed(_ property: PropertyDescription) -> Bool {
        guard property.isIndexedBySpotlight, !property.isTransient, let attribute = property as? AttributeDescription else { return false }
        return attribute.type == .string
    }

    /// The document a row of `entity` with `values` is (no terms when its indexed values are
    /// empty or nil).
    package func document(entity: String, values: [RowValue]) -> TextDocument {
        var document = TextDocument()
        for (slot, number) in slotsByEntity[entity] ?? [] where slot < values.count {
            if case .string(let text) = values[slot] { document.add(text, attribute: number) }
        }
        return document
    }

    /// Attribute numbers by name, for the evaluator.
    package var attributeNumbers: [String: Int] { Dictionary(uniqueKeysWithValues: attributes.enumerated().map { ($1, $0) }) }
}
