// CoreDataStoreWorld: a random library of objects from a seed (the oracle), and the Core Data
// SQLite store holding it, written from Core Data's conventions: one table per hierarchy
// (`ZITEM` holds Item, Book and Film), Z_PK/Z_ENT/Z_OPT, a same-named attribute of two
// subentities as ZFORMAT and ZFORMAT1, to-one columns, an ordered one-to-many with Z_FOK_SHELF,
// many-to-many join tables (one ordered, with Z_FOK_3FILMS), a one-to-one stored on one side,
// dates in seconds since 2001, UUIDs as 16 bytes, external binary data in
// `.<name>_SUPPORT/_EXTERNAL_DATA`, and optionally every page in the `-wal` file.
//
// Test support only. Written from the conventions, not from the reader's layout code, so each
// checks the other.

import Foundation
import Strata
import StrataSQLiteStore
import _StrataTestSupport

struct CoreDataStoreWorld {
    /// Entity numbers as Core Data gives them (names in order).
    static let numbers = ["Author": 1, "Book": 2, "Film": 3, "Item": 4, "Playlist": 5, "Profile": 6, "Review": 7, "Shelf": 8, "Tag": 9]

    struct Key: Hashable, Comparable, CustomStringConvertible {
        let entity: String
        let pk: Int64
        static func < (a: Key, b: Key) -> Bool { (a.entity, a.pk) < (b.entity, b.pk) }
        var description: String { "\(entity)/p\(pk)" }
    }

    /// One object: its attributes as `value(forKey:)` should read them, and its relationships.
    struct Object {
        var key: Key
        var version: Int64
        var attributes: [String: AnyHashable] = [:]
        var toOne: [String: Key] = [:]
        var toMany: [String: [Key]] = [:]
    }

    var objects: [Key: Object] = [:]
    let uuid = UUID().uuidString

    /// One transaction of Core Data's persistent history (ATRANSACTION, its ACHANGE rows).
    struct Transaction {
        var pk: Int64
        var timestamp: Double
        var author: String?
        var contextName: String?
        var changes: [(pk: Int64, type: Int64, object: Key)]
    }
    /// The history the store keeps (nil: no history tables).
    var history: [Transaction]?
    /// How far each entity's Z_MAX lies past its largest key (objects created and deleted since).
    var deletedKeys: Int64 = 0

    static func model() -> ManagedObjectModel {
        let author = EntityDescription(name: "Author"), book = EntityDescription(name: "Book"), film = EntityDescription(name: "Film")
        let item = EntityDescription(name: "Item"), playlist = EntityDescription(name: "Playlist"), profile = EntityDescription(name: "Profile")
        let review = EntityDescription(name: "Review"), shelf = EntityDescription(name: "Shelf"), tag = EntityDescription(name: "Tag")
        func pair(_ a: RelationshipDescription, _ b: RelationshipDescription) { a.inverseRelationship = b; b.inverseRelationship = a }
        let itemAuthor = RelationshipDescription(name: "author", destination: author)
        let authorItems = RelationshipDescription(name: "items", destination: item, toMany: true)
        pair(itemAuthor, authorItems)
        let itemShelf = RelationshipDescription(name: "shelf", destination: shelf)
        let shelfItems = RelationshipDescription(name: "items", destination: item, toMany: true)
        shelfItems.isOrdered = true
        pair(itemShelf, shelfItems)
        let itemTags = RelationshipDescription(name: "tags", destination: tag, toMany: true)
        let tagItems = RelationshipDescription(name: "items", destination: item, toMany: true)
        pair(itemTags, tagItems)
        let itemReviews = RelationshipDescription(name: "reviews", destination: review, toMany: true)
        let reviewItem = RelationshipDescription(name: "item", destination: item)
        pair(itemReviews, reviewItem)
        let filmPlaylists = RelationshipDescription(name: "playlists", destination: playlist, toMany: true)
        let playlistFilms = RelationshipDescription(name: "films", destination: film, toMany: true)
        playlistFilms.isOrdered = true
        pair(filmPlaylists, playlistFilms)
        let authorProfile = RelationshipDescription(name: "profile", destination: profile)
        let profileAuthor = RelationshipDescription(name: "author", destination: author)
        pair(authorProfile, profileAuthor)
        func attribute(_ name: String, _ type: AttributeDescription.AttributeType, external: Bool = false) -> AttributeDescription {
            let a = AttributeDescription(name: name, type: type)
            a.allowsExternalBinaryDataStorage = external
            return a
        }
        item.properties = [attribute("title", .string), attribute("code", .integer64), attribute("price", .decimal),
                           attribute("added", .date), attribute("cover", .binaryData, external: true), attribute("link", .uri),
                           attribute("flag", .boolean), attribute("meta", .transformable), itemAuthor, itemShelf, itemTags, itemReviews]
        book.properties = [attribute("pages", .integer32), attribute("isbn", .uuid), attribute("format", .string)]
        film.properties = [attribute("minutes", .integer16), attribute("rating", .double), attribute("ratio", .float),
                           attribute("format", .integer16), filmPlaylists]
        item.subentities = [book, film]
        author.properties = [attribute("name", .string), authorItems, authorProfile]
        profile.properties = [attribute("bio", .string), profileAuthor]
        review.properties = [attribute("text", .string), reviewItem]
        shelf.properties = [attribute("label", .string), shelfItems]
        tag.properties = [attribute("name", .string), tagItems]
        playlist.properties = [attribute("name", .string), playlistFilms]
        // Kept in a delete's tombstone (ZTOMBSTONE<n>, in the order of their names).
        for preserved in [item.attributesByName["title"], item.attributesByName["code"], book.attributesByName["isbn"], author.attributesByName["name"]] {
            preserved?.preservesValueInHistoryOnDeletion = true
        }
        let model = ManagedObjectModel()
        model.entities = [author, book, film, item, playlist, profile, review, shelf, tag]
        return model
    }

    /// The names of the attributes a delete of `entity` keeps, in tombstone column order.
    static func tombstoneNames(_ entity: String) -> [String] {
        switch entity {
        case "Author": return ["name"]
        case "Book": return ["code", "isbn", "title"]
        case "Item", "Film": return ["code", "title"]
        default: return []
        }
    }

    /// Stored values beside the oracle's: (object, column) → SQLite value, and external files.
    private var stored: [Key: [String: SQLiteValue]] = [:]
    private var externalFiles: [String: Data] = [:]

    init(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var nextKey: [String: Int64] = [:]   // per table
        func make(_ entity: String, table: String) -> Key {
            let pk = nextKey[table, default: 0] + Int64.random(in: 1...3, using: &random)
            nextKey[table] = pk
            let key = Key(entity: entity, pk: pk)
            objects[key] = Object(key: key, version: Int64.random(in: 1...9, using: &random))
            return key
        }
        func count(_ most: Int) -> Int { Int.random(in: 0...most, using: &random) }
        let authors = (0..<count(6)).map { _ in make("Author", table: "ZAUTHOR") }
        let profiles = (0..<count(5)).map { _ in make("Profile", table: "ZPROFILE") }
        let shelves = (0..<count(4)).map { _ in make("Shelf", table: "ZSHELF") }
        let tags = (0..<count(6)).map { _ in make("Tag", table: "ZTAG") }
        let playlists = (0..<count(4)).map { _ in make("Playlist", table: "ZPLAYLIST") }
        let items = (0..<count(30)).map { _ in make(["Item", "Book", "Film"].randomElement(using: &random)!, table: "ZITEM") }
        let reviews = (0..<count(20)).map { _ in make("Review", table: "ZREVIEW") }
        func maybe(_ chance: Double = 0.8) -> Bool { Double.random(in: 0..<1, using: &random) < chance }
        func text() -> String { String((0..<Int.random(in: 0...12, using: &random)).map { _ in "abcdé xyz😀".randomElement(using: &random)! }) }
        func set(_ key: Key, _ name: String, _ value: AnyHashable?, _ column: SQLiteValue) {
            if let value { objects[key]!.attributes[name] = value }
            stored[key, default: [:]]["Z" + name.uppercased()] = value == nil ? .null : column
        }
        for key in authors { let name = text(); set(key, "name", name, .text(name)) }
        for key in profiles { let bio = text(); set(key, "bio", maybe() ? bio : nil, .text(bio)) }
        for key in shelves { let label = text(); set(key, "label", label, .text(label)) }
        for key in tags + playlists { let name = text(); set(key, "name", name, .text(name)) }
        for key in reviews { let body = text(); set(key, "text", body, .text(body)) }
        for key in items {
            let title = text(); set(key, "title", maybe() ? title : nil, .text(title))
            let code = Int64.random(in: -1_000_000...1_000_000_000_000, using: &random); set(key, "code", maybe() ? code : nil, .integer(code))
            let cents = Double(Int.random(in: 0...100_000, using: &random)) / 4
            set(key, "price", maybe() ? Decimal(string: "\(cents)")! : nil, .real(cents))
            let seconds = Double(Int.random(in: -1_000_000_000...1_000_000_000, using: &random)) + 0.25
            set(key, "added", maybe() ? Date(timeIntervalSinceReferenceDate: seconds) : nil, .real(seconds))
            let flag = Bool.random(using: &random); set(key, "flag", maybe() ? flag : nil, .integer(flag ? 1 : 0))
            let link = "https://example.org/\(key.pk)?q=\(Int.random(in: 0...99, using: &random))"
            set(key, "link", maybe() ? URL(string: link)! : nil, .text(link))
            let meta = (0..<Int.random(in: 1...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            set(key, "meta", maybe() ? Data(meta) : nil, .blob(meta))
            let cover = Data((0..<Int.random(in: 0...3_000, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
            if maybe(0.3) {
                let file = UUID().uuidString
                externalFiles[file] = cover
                set(key, "cover", cover, .blob([2] + Array(file.utf8) + [0]))
            } else {
                set(key, "cover", maybe() ? cover : nil, .blob([1] + Array(cover)))
            }
            if key.entity == "Book" {
                let pages = Int64(Int32.random(in: 1...Int32.max, using: &random)); set(key, "pages", maybe() ? pages : nil, .integer(pages))
                let isbn = UUID(); set(key, "isbn", maybe() ? isbn : nil, .blob(withUnsafeBytes(of: isbn.uuid) { Array($0) }))
                let format = text(); set(key, "format", maybe() ? format : nil, .text(format))
            }
            if key.entity == "Film" {
                let minutes = Int64(Int16.random(in: 1...Int16.max, using: &random)); set(key, "minutes", maybe() ? minutes : nil, .integer(minutes))
                let rating = Double.random(in: 0...10, using: &random); set(key, "rating", maybe() ? rating : nil, .real(rating))
                let ratio = Float.random(in: 1...3, using: &random); set(key, "ratio", maybe() ? ratio : nil, .real(Double(ratio)))
                let format = Int64(Int16.random(in: 0...9, using: &random))
                objects[key]!.attributes["format"] = format
                stored[key, default: [:]]["ZFORMAT1"] = .integer(format)   // Film's "format": the second declaration
            }
        }
        // Relationships: to-ones chosen at random, to-manys their inverses (ordered ones shuffled).
        func link(_ owner: Key, _ name: String, _ member: Key?, inverse: String, ordered: Bool = false) {
            guard let member else { return }
            objects[owner]!.toOne[name] = member
            objects[member]!.toMany[inverse, default: []].append(owner)
            _ = ordered
        }
        for key in items {
            link(key, "author", maybe(0.7) ? authors.randomElement(using: &random) : nil, inverse: "items")
            link(key, "shelf", maybe(0.7) ? shelves.randomElement(using: &random) : nil, inverse: "items")
            for tag in tags where maybe(0.3) {
                objects[key]!.toMany["tags", default: []].append(tag)
                objects[tag]!.toMany["items", default: []].append(key)
            }
        }
        for key in reviews { link(key, "item", maybe(0.9) ? items.randomElement(using: &random) : nil, inverse: "reviews") }
        for playlist in playlists {
            for film in items.filter({ $0.entity == "Film" }).shuffled(using: &random) where maybe(0.5) {
                objects[playlist]!.toMany["films", default: []].append(film)
                objects[film]!.toMany["playlists", default: []].append(playlist)
            }
        }
        for shelf in shelves { objects[shelf]!.toMany["items"]?.shuffle(using: &random) }
        // Persistent history: some transactions of changes to the objects (and to an entity the
        // model does not have: number 99), authors and context names as text or string keys.
        if seed % 3 != 1 {
            var list: [Transaction] = []
            var changePK: Int64 = 0
            let keys = objects.keys.sorted()
            for number in 1...Int64.random(in: 1...6, using: &random) {
                var transaction = Transaction(pk: number, timestamp: Double(700_000_000 + Int(number) * 60) + 0.5,
                                              author: maybe(0.7) ? ["app", "importer", "sync"].randomElement(using: &random) : nil,
                                              contextName: maybe(0.5) ? "context\(number)" : nil, changes: [])
                for _ in 0..<Int.random(in: 0...5, using: &random) where !keys.isEmpty {
                    changePK += 1
                    transaction.changes.append((changePK, Int64.random(in: 0...2, using: &random), keys.randomElement(using: &random)!))
                }
                if maybe(0.3) { changePK += 1; transaction.changes.append((changePK, 0, Key(entity: "Gone", pk: 5))) }
                list.append(transaction)
            }
            history = list
        }
        var free = profiles.shuffled(using: &random)
        for author in authors where maybe(0.7) {
            guard let profile = free.popLast() else { break }
            objects[author]!.toOne["profile"] = profile
            objects[profile]!.toOne["author"] = author
        }
    }

    // MARK: Writing the store

    /// Writes the store at `path` (its external data beside it); with `inLog`, the main file is
    /// empty and every page is in `-wal`; `modelCache` is Z_MODELCACHE's content (compressed).
    func write(to path: String, inLog: Bool, pageSize: Int = 1024, modelCache: [UInt8]? = nil) throws {
        var writer = SQLiteFileWriter()
        writer.pageSize = pageSize
        let hierarchy = ["Item": "ZITEM", "Book": "ZITEM", "Film": "ZITEM"]
        func table(of key: Key) -> String { hierarchy[key.entity] ?? "Z" + key.entity.uppercased() }
        let columns: [String: [String]] = [
            "ZAUTHOR": ["ZNAME", "ZPROFILE"], "ZPROFILE": ["ZBIO"], "ZSHELF": ["ZLABEL"], "ZTAG": ["ZNAME"], "ZPLAYLIST": ["ZNAME"],
            "ZREVIEW": ["ZTEXT", "ZITEM"],
            "ZITEM": ["ZTITLE", "ZCODE", "ZPRICE", "ZADDED", "ZCOVER", "ZLINK", "ZFLAG", "ZMETA", "ZAUTHOR", "ZSHELF", "Z_FOK_SHELF",
                      "ZPAGES", "ZISBN", "ZFORMAT", "ZMINUTES", "ZRATING", "ZRATIO", "ZFORMAT1"],
        ]
        var tables: [SQLiteTestTable] = []
        for (name, names) in columns.sorted(by: { $0.key < $1.key }) {
            var rows: [(rowid: Int64, values: [SQLiteValue])] = []
            for key in objects.keys.sorted(by: { $0.pk < $1.pk }) where table(of: key) == name {
                let object = objects[key]!
                var values: [SQLiteValue] = [.null, .integer(Int64(Self.numbers[key.entity]!)), .integer(object.version)]
                for column in names {
                    var value = stored[key]?[column] ?? .null
                    switch column {
                    case "ZAUTHOR", "ZSHELF", "ZITEM", "ZPROFILE":
                        let relationship = String(column.dropFirst()).lowercased()
                        value = object.toOne[relationship].map { .integer($0.pk) } ?? .null
                    case "Z_FOK_SHELF":
                        if let shelf = object.toOne["shelf"], let position = objects[shelf]!.toMany["items"]!.firstIndex(of: key) {
                            value = .integer(Int64(position + 1) * 1024)
                        }
                    default: break
                    }
                    values.append(value)
                }
                rows.append((key.pk, values))
            }
            let sql = "CREATE TABLE \(name) ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, " + names.map { "\($0) \($0.hasPrefix("Z_FOK") ? "INTEGER" : "VARCHAR")" }.joined(separator: ", ") + " )"
            tables.append(SQLiteTestTable(name: name, rows: rows, sql: sql))
        }
        // Item.tags <-> Tag.items: Z_4TAGS (Z_4ITEMS: items' keys, Z_9TAGS: tags' keys).
        var tagRows: [(rowid: Int64, values: [SQLiteValue])] = []
        for key in objects.keys.sorted() where table(of: key) == "ZITEM" {
            for tag in objects[key]!.toMany["tags"] ?? [] { tagRows.append((Int64(tagRows.count + 1), [.integer(key.pk), .integer(tag.pk)])) }
        }
        tables.append(SQLiteTestTable(name: "Z_4TAGS", rows: tagRows, sql: "CREATE TABLE Z_4TAGS ( Z_4ITEMS INTEGER, Z_9TAGS INTEGER, PRIMARY KEY (Z_4ITEMS, Z_9TAGS) )"))
        // Film.playlists <-> Playlist.films (ordered): Z_3PLAYLISTS (Z_3FILMS, Z_5PLAYLISTS, Z_FOK_3FILMS).
        var filmRows: [(rowid: Int64, values: [SQLiteValue])] = []
        for key in objects.keys.sorted() where key.entity == "Playlist" {
            for (position, film) in (objects[key]!.toMany["films"] ?? []).enumerated() {
                filmRows.append((Int64(filmRows.count + 1), [.integer(film.pk), .integer(key.pk), .integer(Int64(position * 3 + 7))]))
            }
        }
        tables.append(SQLiteTestTable(name: "Z_3PLAYLISTS", rows: filmRows.shuffled().enumerated().map { (Int64($0.offset + 1), $0.element.values) }, sql: "CREATE TABLE Z_3PLAYLISTS ( Z_3FILMS INTEGER, Z_5PLAYLISTS INTEGER, Z_FOK_3FILMS INTEGER, PRIMARY KEY (Z_3FILMS, Z_5PLAYLISTS) )"))
        let supers = ["Book": 4, "Film": 4]
        let primaryKeys = Self.numbers.sorted { $0.value < $1.value }.map { name, number -> (rowid: Int64, values: [SQLiteValue]) in
            let most = objects.keys.filter { table(of: $0) == (hierarchy[name] ?? "Z" + name.uppercased()) }.map(\.pk).max() ?? 0
            return (Int64(number), [.null, .text(name), .integer(Int64(supers[name] ?? 0)), .integer(most + deletedKeys)])
        }
        tables.append(SQLiteTestTable(name: "Z_PRIMARYKEY", rows: primaryKeys, sql: "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"))
        let plist = try PropertyListSerialization.data(fromPropertyList: [
            "NSStoreType": "SQLite", "NSStoreUUID": uuid, "appKey": "app value",
            "NSStoreModelVersionHashes": Dictionary(uniqueKeysWithValues: Self.numbers.keys.map { ($0, Data([1, 2, 3])) }),
        ] as [String: Any], format: .binary, options: 0)
        tables.append(SQLiteTestTable(name: "Z_METADATA", rows: [(1, [.null, .text(uuid), .blob(Array(plist))])], sql: "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)"))
        if let history {
            // Author strings through ATRANSACTIONSTRING for "importer" (ZAUTHORTS), as text otherwise.
            tables.append(SQLiteTestTable(name: "ATRANSACTIONSTRING", rows: [(1, [.null, .integer(16003), .null, .text("importer")])],
                                          sql: "CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )"))
            tables.append(SQLiteTestTable(name: "ATRANSACTION", rows: history.map { t in
                let authorTS: SQLiteValue = t.author == "importer" ? .integer(1) : .null
                let author: SQLiteValue = t.author.map { $0 == "importer" ? SQLiteValue.null : .text($0) } ?? .null
                return (t.pk, [.null, .integer(16002), .null, authorTS, .null, .null, .null, .real(t.timestamp), author, .text("com.example.app"),
                               t.contextName.map(SQLiteValue.text) ?? .null, .text("42"), .null])
            }, sql: "CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )"))
            // A delete keeps its object's preserved values as they are stored (a UUID as 16 bytes).
            tables.append(SQLiteTestTable(name: "ACHANGE", rows: history.flatMap { t in t.changes.map { change in
                var tombstone: [SQLiteValue] = [.null, .null, .null]
                if change.type == 2 {
                    for (index, name) in Self.tombstoneNames(change.object.entity).enumerated() {
                        tombstone[index] = stored[change.object]?["Z" + name.uppercased()] ?? .null
                    }
                }
                return (change.pk, [.null, .integer(16001), .integer(0), .integer(change.type), .integer(Int64(Self.numbers[change.object.entity] ?? 99)),
                                    .integer(change.object.pk), .integer(t.pk), .null] + tombstone)
            } }, sql: "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB, ZTOMBSTONE0 BLOB, ZTOMBSTONE1 BLOB, ZTOMBSTONE2 BLOB )"))
        }
        if let modelCache { tables.append(SQLiteTestTable(name: "Z_MODELCACHE", rows: [(1, [.blob(modelCache)])], sql: "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")) }
        let pages = writer.pages(tables)
        if inLog {
            try Data().write(to: URL(fileURLWithPath: path))
            try Data(writer.wal(base: [], versions: [pages], bigEndian: false)).write(to: URL(fileURLWithPath: path + "-wal"))
        } else {
            try writer.write(pages, to: path)
        }
        let url = URL(fileURLWithPath: path)
        let support = url.deletingLastPathComponent().appendingPathComponent(".\(url.deletingPathExtension().lastPathComponent)_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: support, withIntermediateDirectories: true)
        for (name, data) in externalFiles { try data.write(to: support.appendingPathComponent(name)) }
    }
}
