// SearchSuite: the `search` workloads: full-text search in a native store's index against SQLite
// FTS5 (the system C library, an external-content table with `unicode61 remove_diacritics 2`),
// same documents, same queries, one process.
//
// Data: a corpus of real documents, STRATA_TEXT_CORPUS (JSON Lines of name, title, description;
// `python3 Scripts/text-corpus.py FILE` writes one from the machine's Debian package lists).
// Workloads: building the index over every document already stored; its size; top-20 queries by
// relevance for single words, prefixes and two-word phrases taken from the documents (a seeded
// choice, the same for both); and, for Strata alone, a durable save of one changed object with
// its title indexed against the same save in a store that indexes nothing.
import Foundation
import Strata
import CSQLite

final class SearchDocument: ManagedObject {
    @Managed var name: String = ""
    @Managed var title: String = ""
    @Managed var details: String = ""
}

final class PlainDocument: ManagedObject {
    @Managed var name: String = ""
    @Managed var title: String = ""
    @Managed var details: String = ""
}

enum SearchSuite {
    struct Document { var name, title, details: String }

    static func measurement(_ workload: String, _ system: String, _ value: Double, _ unit: String) -> Measurement {
        Measurement(suite: "search", workload: workload, system: system, value: value, unit: unit)
    }

    static func corpus() throws -> [Document] {
        guard let path = ProcessInfo.processInfo.environment["STRATA_TEXT_CORPUS"] else {
            throw BenchError("the search suite needs STRATA_TEXT_CORPUS (python3 Scripts/text-corpus.py FILE writes one)")
        }
        return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String] ?? [:]
            return Document(name: object["name"] ?? "", title: object["title"] ?? "", details: object["description"] ?? "")
        }
    }

    /// Queries of each kind from the documents' titles: words, prefixes of three letters, phrases.
    static func queries(_ documents: [Document]) -> [(kind: String, text: String)] {
        var generator = SplitMix(seed: 20261129)
        var result: [(String, String)] = []
        var attempts = 0
        while result.count < 60 && attempts < 100_000 {
            attempts += 1
            let words = documents[Int(generator.next() % UInt64(documents.count))].title.lowercased()
                .split(whereSeparator: { !$0.isLetter }).map(String.init).filter { $0.count >= 3 && $0.allSatisfy { $0.isASCII } }
            guard words.count >= 2 else { continue }
            let i = Int(generator.next() % UInt64(words.count - 1))
            switch result.count % 3 {
            case 0: result.append(("word", words[i]))
            case 1: result.append(("prefix", String(words[i].prefix(3)) + "*"))
            default: result.append(("phrase", "\"\(words[i]) \(words[i + 1])\""))
            }
        }
        return result
    }

    static func run(directory: String) throws -> [Measurement] {
        let documents = try corpus()
        let queries = queries(documents)
        var results: [Measurement] = []
        results += try runStrata(documents, queries: queries, directory: directory)
        results += try runSQLite(documents, queries: queries, directory: directory)
        return results
    }

    static func runStrata(_ documents: [Document], queries: [(kind: String, text: String)], directory: String) throws -> [Measurement] {
        let model = try ManagedObjectModel(classes: [SearchDocument.self, PlainDocument.self])
        for name in ["title", "details"] { model.entitiesByName["SearchDocument"]!.attributesByName[name]!.isIndexedBySpotlight = true }
        let url = URL(fileURLWithPath: directory + "/search.strata")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let description = PersistentStoreDescription(url: url)
        try coordinator.addPersistentStore(type: .native, at: url, options: nil)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        var results: [Measurement] = []
        try context.performAndWait {
            for entity in ["SearchDocument", "PlainDocument"] {
                var next = 0
                _ = try context.execute(BatchInsertRequest(entity: model.entitiesByName[entity]!, dictionaryHandler: { row in
                    guard next < documents.count else { return true }
                    row["name"] = documents[next].name; row["title"] = documents[next].title; row["details"] = documents[next].details
                    next += 1
                    return false
                }))
            }
        }
        let delegate = CoreSpotlightDelegate(forStoreWith: description, coordinator: coordinator)
        let build = try Clock.time {
            delegate.startSpotlightIndexing()
            if let error = delegate.lastError { throw error }
        }
        results.append(measurement("index build (\(documents.count) documents)", "strata", Double(documents.count) / build, "documents/s"))
        // The index's size as built: its two trees' pages, read with the store removed.
        for store in coordinator.persistentStores { try coordinator.remove(store) }
        do {
            var options = StorageOptions()
            options.readOnly = true
            let engine = try StorageEngine(path: url.path, options: options)
            defer { engine.close() }
            let statistics = try engine.statistics(fillFactor: false)
            let pages = statistics.trees.filter { $0.name.rawValue.hasPrefix("text/") }.reduce(0) { $0 + $1.branchPages + $1.leafPages + $1.overflowPages }
            results.append(measurement("index size", "strata", Double(pages * statistics.pageSize), "bytes"))
        }
        try coordinator.addPersistentStore(type: .native, at: url, options: nil)
        try context.performAndWait {
            for kind in ["word", "prefix", "phrase"] {
                let texts = queries.filter { $0.kind == kind }.map(\.text)
                let searches = try texts.map { try TextSearch($0) }
                let request = FetchRequest<ManagedObjectID>(entityName: "SearchDocument")
                request.resultType = .managedObjectIDResultType
                request.fetchLimit = 20
                let rate = try FetchSuite.rate {
                    for search in searches {
                        request.textSearch = search
                        blackHole(try context.fetch(request).count)
                    }
                }
                results.append(measurement("top 20 by relevance: \(kind)", "strata", rate * Double(searches.count), "queries/s"))
            }
            // One changed object saved, durably: its title indexed, or not indexed at all.
            var rates: [Double] = []
            for entity in ["SearchDocument", "PlainDocument"] {
                let fetch = FetchRequest<ManagedObject>(entityName: entity)
                fetch.fetchLimit = 200
                let objects = try context.fetch(fetch)
                var round = 0
                let saves = 1_000
                let seconds = try Clock.time {
                    for i in 0..<saves {
                        let object = objects[i % objects.count]
                        object.setValue("\(documents[(i * 7919 + round) % documents.count].title) \(i)", forKey: "title")
                        try context.save()
                    }
                }
                round += 1
                rates.append(Double(saves) / seconds)
            }
            results.append(measurement("save one changed object, title indexed", "strata", rates[0], "saves/s"))
            results.append(measurement("save one changed object, nothing indexed", "strata", rates[1], "saves/s"))
            // The goal's form: an indexed save's cost against the same save without an index.
            results.append(measurement("indexed save's cost / unindexed save's", "strata", rates[1] / rates[0], "x"))
        }
        return results
    }

    static func runSQLite(_ documents: [Document], queries: [(kind: String, text: String)], directory: String) throws -> [Measurement] {
        let path = directory + "/search.sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK, let db else { throw BenchError("sqlite3_open(\(path)) failed") }
        defer { sqlite3_close(db) }
        let sql = SQLiteStatements(db: db)
        func exec(_ text: String) throws { try sql.exec(text) }
        func prepare(_ text: String) throws -> OpaquePointer { try sql.prepare(text) }
        var results: [Measurement] = []
        try exec("PRAGMA journal_mode=WAL")
        try exec("CREATE TABLE doc (id INTEGER PRIMARY KEY, name TEXT, title TEXT, details TEXT)")
        let insert = try prepare("INSERT INTO doc (name, title, details) VALUES (?, ?, ?)")
        try exec("BEGIN")
        for document in documents {
            sqlite3_bind_text(insert, 1, document.name, -1, csqlite_transient())
            sqlite3_bind_text(insert, 2, document.title, -1, csqlite_transient())
            sqlite3_bind_text(insert, 3, document.details, -1, csqlite_transient())
            guard sqlite3_step(insert) == SQLITE_DONE else { throw BenchError("insert failed") }
            sqlite3_reset(insert)
        }
        try exec("COMMIT")
        sqlite3_finalize(insert)
        let build = try Clock.time {
            try exec("CREATE VIRTUAL TABLE f USING fts5(title, details, content='doc', content_rowid='id', tokenize='unicode61 remove_diacritics 2')")
            try exec("INSERT INTO f(rowid, title, details) SELECT id, title, details FROM doc")
        }
        results.append(measurement("index build (\(documents.count) documents)", "sqlite", Double(documents.count) / build, "documents/s"))
        let size = try prepare("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'f_%'")
        if sqlite3_step(size) == SQLITE_ROW { results.append(measurement("index size", "sqlite", Double(sqlite3_column_int64(size, 0)), "bytes")) }
        sqlite3_finalize(size)
        let search = try prepare("SELECT rowid FROM f WHERE f MATCH ? ORDER BY rank LIMIT 20")
        for kind in ["word", "prefix", "phrase"] {
            let texts = queries.filter { $0.kind == kind }.map(\.text)
            let rate = FetchSuite.rate {
                for text in texts {
                    sqlite3_bind_text(search, 1, text, -1, csqlite_transient())
                    var rows = 0
                    while sqlite3_step(search) == SQLITE_ROW { rows += 1 }
                    sqlite3_reset(search)
                    blackHole(rows)
                }
            }
            results.append(measurement("top 20 by relevance: \(kind)", "sqlite", rate * Double(texts.count), "queries/s"))
        }
        sqlite3_finalize(search)
        return results
    }
}

extension SearchSuite {
    /// Each workload and system's median over `runs`, in the first run's order.
    static func medians(_ runs: [[Measurement]]) -> [Measurement] {
        guard let first = runs.first else { return [] }
        return first.map { m in
            let values = runs.compactMap { run in run.first { $0.workload == m.workload && $0.system == m.system }?.value }.sorted()
            return Measurement(suite: m.suite, workload: m.workload, system: m.system, value: values[values.count / 2], unit: m.unit)
        }
    }
}
