// Catalog: the tree of trees (FORMAT.md §Catalog).
//
// Owns: looking up and listing named trees at one state. The catalog is an ordinary
// copy-on-write B+tree whose root lives in the meta; its keys are tree names (UTF-8) and its
// values are 56-byte tree descriptors. Because every tree's root is a catalog value and the
// catalog's root is in the commit record, a commit is atomic across trees.
// Must never return a descriptor that failed to decode: that is a corruption error.

@_spi(StrataInternal) import StrataCore

enum Catalog {
    /// The descriptor of `name` in the catalog `catalog`, or nil.
    static func descriptor<Source: PageSource>(of name: TreeName, catalog: TreeDescriptor, source: Source) throws -> TreeDescriptor? {
        let key = try name.catalogKey()
        let reader = BTreeReader(source: source, descriptor: catalog, name: "(catalog)")
        return try key.withUnsafeBytes { key in
            try reader.withValue(key) { value -> TreeDescriptor? in
                guard let value else { return nil }
                return try decode(value, name: name.rawValue, path: source.storePath)
            }
        }
    }

    static func decode(_ value: UnsafeRawBufferPointer, name: String, path: String) throws -> TreeDescriptor {
        switch TreeDescriptor.decode(value) {
        case .success(let descriptor): return descriptor
        case .failure(let problem): throw StrataError(.corrupt, "\(path): catalog entry for tree \"\(name)\": \(problem.text)")
        }
    }

    /// Every (name, descriptor) in the catalog, in name order.
    static func list<Source: PageSource>(catalog: TreeDescriptor, source: Source) throws -> [(TreeName, TreeDescriptor)] {
        var cursor = NodeCursor(reader: BTreeReader(source: source, descriptor: catalog, name: "(catalog)"))
        var result: [(TreeName, TreeDescriptor)] = []
        var more = try cursor.first()
        while more {
            let name = String(decoding: cursor.key, as: UTF8.self)
            let descriptor = try cursor.withValue { try decode($0, name: name, path: source.storePath) }
            result.append((TreeName(name), descriptor))
            more = try cursor.next()
        }
        return result
    }
}

/// Tree descriptors of the newest generation looked up so far, so a read transaction per lookup
/// does not descend the catalog each time. Entries are valid for exactly one generation (the
/// catalog of a committed generation never changes).
final class CatalogCache: Sendable {
    private struct State {
        var generation: Generation?
        var entries: [TreeName: TreeDescriptor?] = [:]
    }
    private let state = Lock(State())   // guards the generation and its entries

    func descriptor<Source: PageSource>(of name: TreeName, meta: StoreMeta, source: Source) throws -> TreeDescriptor? {
        let cached = state.withLock { s -> TreeDescriptor?? in
            s.generation == meta.generation ? s.entries[name] : nil
        }
        if let cached { return cached }
        let descriptor = try Catalog.descriptor(of: name, catalog: meta.catalog, source: source)
        state.withLock { s in
            if s.generation != meta.generation {
                guard s.generation.map({ meta.generation > $0 }) ?? true else { return }
                s.generation = meta.generation
                s.entries.removeAll(keepingCapacity: true)
            }
            if s.entries.count < 1024 { s.entries[name] = descriptor }
        }
        return descriptor
    }
}

