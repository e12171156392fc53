// LibraryApp: uses the classes StrataCodegen generated from Library.xcdatamodeld, and checks them.
//
// 1. The model read at run time takes the generated classes (and the hand-written ones).
// 2. A model built from the generated classes has the file model's properties and types.
// 3. The same random operations, once through the typed generated properties and once through
//    key-value access, leave the same store contents.
// Prints "codegen fixture: ok …" and exits 0, or prints what differs and exits 1.

import Foundation
import Strata
import Synchronization

let failures = Mutex<[String]>([])
func fail(_ message: String) { failures.withLock { $0.append(message) } }
func expect(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fail(message()) }
}

let modelURL = Bundle.module.url(forResource: "Library", withExtension: "xcdatamodeld")!

// MARK: 1. Binding

let model = try ManagedObjectModel(contentsOf: modelURL, classes: LibraryModel.managedObjectClasses + [Note.self])
let entities = model.entitiesByName
expect(model.versionIdentifiers == ["2"], "the current version (2) was not read: \(model.versionIdentifiers)")
let expectedClasses: [String: ManagedObject.Type] = [
    "Item": Item.self, "Book": Book.self, "Author": Author.self, "Shelf": Shelf.self, "Note": Note.self, "Stamp": ManagedObject.self,
]
for (name, cls) in expectedClasses {
    expect(entities[name]?.managedObjectClass == cls, "entity \(name) has class \(String(describing: entities[name]?.managedObjectClass)), not \(cls)")
}
expect(entities["Item"]?.isAbstract == true, "Item is not abstract")
// `LibraryApp.Author` names its module, so the class is found without being listed; but its
// `books` hold Book objects, and `.Book` cannot be found by name: Author is left unbound, with a
// warning, rather than bound to a class whose relationships would not type-check.
let unbound = try ManagedObjectModel(contentsOf: modelURL)
expect(unbound.entitiesByName["Author"]?.managedObjectClass == ManagedObject.self, "Author was bound without Book")
expect(unbound.warnings.contains { $0.contains("Author") && $0.contains("Book") }, "no warning about Author: \(unbound.warnings)")

// MARK: 2. The generated classes describe the file's model

let fromClasses = try ManagedObjectModel(classes: [Item.self, Book.self, Author.self, Note.self, Shelf.self])
for name in ["Item", "Book", "Author"] {
    guard let file = entities[name], let generated = fromClasses.entitiesByName[name] else {
        fail("entity \(name) is missing from the model of the generated classes"); continue
    }
    expect(generated.superentity?.name == file.superentity?.name, "\(name): superentity \(String(describing: generated.superentity?.name))")
    let generatedProperties = generated.propertiesByName
    expect(Set(generatedProperties.keys) == Set(file.propertiesByName.keys),
           "\(name): properties \(generatedProperties.keys.sorted()) ≠ \(file.propertiesByName.keys.sorted())")
    for (propertyName, property) in file.propertiesByName {
        switch (property, generatedProperties[propertyName]) {
        case (let a as AttributeDescription, let b as AttributeDescription):
            let sameType = a.type == b.type || (a.type == .transformable && b.type == .transformable)
            expect(sameType, "\(name).\(propertyName): type \(b.type) ≠ \(a.type)")
        case (let a as RelationshipDescription, let b as RelationshipDescription):
            expect(a.isToMany == b.isToMany && a.isOrdered == b.isOrdered && a.destinationEntity?.name == b.destinationEntity?.name,
                   "\(name).\(propertyName): relationship shape differs")
            if a.inverseRelationship != nil, b.destinationEntity.map({ ["Item", "Book", "Author"].contains($0.name) }) == true {
                expect(b.inverseRelationship?.name == a.inverseRelationship?.name, "\(name).\(propertyName): inverse \(String(describing: b.inverseRelationship?.name))")
            }
        default:
            fail("\(name).\(propertyName): attribute in one model, relationship in the other")
        }
    }
}

// `fetchRequest()` is typed for a subclass's class too, without a type to guide it.
let bookRequest = Book.fetchRequest()
expect(bookRequest.entityName == "Book", "Book.fetchRequest() fetches \(String(describing: bookRequest.entityName))")

// MARK: 3. Typed and key-value access leave the same store

enum Operation {
    case author(name: String, born: Date?, mentor: String?)
    case book(isbn: String, title: String, pages: Int16, edition: Int32?, rating: Double, price: Decimal?, tags: [String]?, flag: Bool, author: String?)
    case shelf(label: String, position: Int32, books: [String])
    case note(text: String, book: String)
    case retitle(isbn: String, title: String, rating: Double)
    case shelve(label: String, isbn: String)
    case deleteBook(isbn: String)
    case stamp(seconds: Double)
    case save
}

struct Generator {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int((state >> 33) % UInt64(bound))
    }
}

func operations(seed: UInt64, count: Int) -> [Operation] {
    var random = Generator(state: seed)
    var authors: [String] = [], books: [String] = [], shelves: [String] = []
    var result: [Operation] = []
    for index in 0..<count {
        switch random.next(10) {
        case 0, 1:
            let name = "author\(index)"
            result.append(.author(name: name, born: random.next(2) == 0 ? nil : Date(timeIntervalSinceReferenceDate: Double(random.next(1_000_000))),
                                  mentor: authors.isEmpty || random.next(2) == 0 ? nil : authors[random.next(authors.count)]))
            authors.append(name)
        case 2, 3, 4:
            let isbn = "isbn-\(index)"
            result.append(.book(isbn: isbn, title: "Title \(random.next(100))", pages: Int16(random.next(900)),
                                edition: random.next(3) == 0 ? nil : Int32(random.next(5)), rating: Double(random.next(50)) / 10,
                                price: random.next(2) == 0 ? nil : Decimal(random.next(10_000)) / 100,
                                tags: random.next(2) == 0 ? nil : (0..<random.next(3)).map { "tag\($0)" }, flag: random.next(2) == 0,
                                author: authors.isEmpty ? nil : authors[random.next(authors.count)]))
            books.append(isbn)
        case 5 where !books.isEmpty:
            let label = "shelf\(index)"
            result.append(.shelf(label: label, position: Int32(random.next(20)), books: (0..<random.next(4)).map { _ in books[random.next(books.count)] }))
            shelves.append(label)
        case 6 where !books.isEmpty:
            result.append(.note(text: "note \(index)", book: books[random.next(books.count)]))
        case 7 where !books.isEmpty:
            result.append(.retitle(isbn: books[random.next(books.count)], title: "New \(index)", rating: Double(random.next(50)) / 10))
        case 8 where !books.isEmpty && !shelves.isEmpty:
            result.append(.shelve(label: shelves[random.next(shelves.count)], isbn: books[random.next(books.count)]))
        case 9 where books.count > 3 && random.next(3) == 0:
            result.append(.deleteBook(isbn: books.remove(at: random.next(books.count))))
        case 9:
            result.append(.stamp(seconds: Double(random.next(1000))))
        default:
            result.append(.save)
        }
    }
    return result + [.save]
}

/// Applies operations through the generated classes' typed properties.
func applyTyped(_ operations: [Operation], in context: ManagedObjectContext) throws {
    var authors: [String: Author] = [:], books: [String: Book] = [:], shelves: [String: Shelf] = [:]
    for operation in operations {
        switch operation {
        case let .author(name, born, mentor):
            let author = Author(context: context)
            author.name = name
            author.born = born
            author.mentor = mentor.flatMap { authors[$0] }
            authors[name] = author
        case let .book(isbn, title, pages, edition, rating, price, tags, flag, author):
            let book = Book(context: context)
            book.isbn = isbn
            book.title = title
            book.pages = pages
            book.edition = edition
            book.rating = rating
            book.price = price
            book.tags = tags
            book.default = flag
            book.published = Date(timeIntervalSinceReferenceDate: 1000)
            if let author = author.flatMap({ authors[$0] }) { author.addToBooks(book) }
            books[isbn] = book
        case let .shelf(label, position, isbns):
            let shelf = Shelf(context: context)
            shelf.label = label
            shelf.position = position
            for isbn in isbns { if let book = books[isbn], !shelf.books.contains(book) { shelf.addToBooks(book) } }
            shelves[label] = shelf
        case let .note(text, isbn):
            let note = Note(context: context)
            note.text = text
            note.book = books[isbn]
        case let .retitle(isbn, title, rating):
            books[isbn]?.title = title
            books[isbn]?.rating = rating
        case let .shelve(label, isbn):
            if let shelf = shelves[label], let book = books[isbn], !shelf.books.contains(book) { shelf.insertIntoBooks(book, at: 0) }
        case let .deleteBook(isbn):
            if let book = books.removeValue(forKey: isbn) { context.delete(book) }
        case let .stamp(seconds):
            let stamp = ManagedObject(entity: context.persistentStoreCoordinator!.managedObjectModel.entitiesByName["Stamp"]!, insertInto: context)
            stamp.setValue(Date(timeIntervalSinceReferenceDate: seconds), forKey: "when")
        case .save:
            try context.save()
        }
    }
}

/// Applies the same operations through `value(forKey:)` and `setValue(_:forKey:)` only.
func applyByKey(_ operations: [Operation], in context: ManagedObjectContext) throws {
    var objects: [String: ManagedObject] = [:]
    func insert(_ entity: String) -> ManagedObject { EntityDescription.insertNewObject(forEntityName: entity, into: context) }
    for operation in operations {
        switch operation {
        case let .author(name, born, mentor):
            let author = insert("Author")
            author.setValue(name, forKey: "name")
            author.setValue(born, forKey: "born")
            author.setValue(mentor.flatMap { objects[$0] }, forKey: "mentor")
            objects[name] = author
        case let .book(isbn, title, pages, edition, rating, price, tags, flag, author):
            let book = insert("Book")
            book.setValue(isbn, forKey: "isbn")
            book.setValue(title, forKey: "title")
            book.setValue(pages, forKey: "pages")
            book.setValue(edition, forKey: "edition")
            book.setValue(rating, forKey: "rating")
            book.setValue(price, forKey: "price")
            book.setValue(tags, forKey: "tags")
            book.setValue(flag, forKey: "default")
            book.setValue(Date(timeIntervalSinceReferenceDate: 1000), forKey: "published")
            book.setValue(author.flatMap { objects[$0] }, forKey: "author")
            objects[isbn] = book
        case let .shelf(label, position, isbns):
            let shelf = insert("Shelf")
            shelf.setValue(label, forKey: "label")
            shelf.setValue(position, forKey: "position")
            let members = shelf.mutableOrderedSetValue(forKey: "books")
            for isbn in isbns { if let book = objects[isbn], !members.contains(book) { members.add(book) } }
            objects[label] = shelf
        case let .note(text, isbn):
            let note = insert("Note")
            note.setValue(text, forKey: "text")
            note.setValue(objects[isbn], forKey: "book")
        case let .retitle(isbn, title, rating):
            objects[isbn]?.setValue(title, forKey: "title")
            objects[isbn]?.setValue(rating, forKey: "rating")
        case let .shelve(label, isbn):
            if let shelf = objects[label], let book = objects[isbn] {
                let members = shelf.mutableOrderedSetValue(forKey: "books")
                if !members.contains(book) { members.insert(book, at: 0) }
            }
        case let .deleteBook(isbn):
            if let book = objects.removeValue(forKey: isbn) { context.delete(book) }
        case let .stamp(seconds):
            insert("Stamp").setValue(Date(timeIntervalSinceReferenceDate: seconds), forKey: "when")
        case .save:
            try context.save()
        }
    }
}

/// Every object of the store as text, through key-value access (relationships by their key).
func contents(of context: ManagedObjectContext) throws -> [String] {
    func key(_ object: ManagedObject) -> String {
        for name in ["isbn", "name", "label", "text"] where object.entity.propertiesByName[name] != nil {
            return "\(object.value(forKey: name) ?? "nil")"
        }
        return "?"
    }
    var lines: [String] = []
    for entity in ["Author", "Book", "Shelf", "Note", "Stamp"] {
        for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity)) {
            var fields: [String] = []
            for (name, property) in object.entity.propertiesByName.sorted(by: { $0.key < $1.key }) {
                let value = object.value(forKey: name)
                switch value {
                case let set as Set<ManagedObject>: fields.append("\(name)=\(set.map(key).sorted())")
                case let list as [ManagedObject]: fields.append("\(name)=\(list.map(key))")
                case let one as ManagedObject: fields.append("\(name)=\(key(one))")
                default: fields.append("\(name)=\(value.map { "\($0)" } ?? "nil")")
                }
                _ = property
            }
            lines.append("\(entity) " + fields.joined(separator: " "))
        }
    }
    return lines.sorted()
}

func run(_ apply: ([Operation], ManagedObjectContext) throws -> Void, operations: [Operation], at url: URL) throws -> [String] {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    try coordinator.addPersistentStore(type: .native, configuration: nil, at: url, options: [:])
    let context = ManagedObjectContext(.privateQueue)
    context.persistentStoreCoordinator = coordinator
    try context.performAndWait { try apply(operations, context) }
    // Read back through a fresh context, and check that typed reads agree with key-value reads.
    let reader = ManagedObjectContext(.privateQueue)
    reader.persistentStoreCoordinator = coordinator
    return try reader.performAndWait {
        for book in try reader.fetch(Book.fetchRequest()) {
            expect(book.title == book.value(forKey: "title") as? String && book.rating == book.value(forKey: "rating") as? Double
                   && book.tags == book.value(forKey: "tags") as? [String] && book.default == book.value(forKey: "default") as? Bool
                   && book.shelves.count == (book.value(forKey: "shelves") as? Set<ManagedObject>)?.count,
                   "book \(book.isbn): typed and key-value reads differ")
        }
        for shelf in try reader.fetch(Shelf.fetchRequest()) {
            expect(shelf.summary == "\(shelf.value(forKey: "label") as? String ?? "?") (\((shelf.value(forKey: "books") as? [ManagedObject])?.count ?? -1) books)",
                   "shelf \(shelf.label): category properties read wrongly")
        }
        return try contents(of: reader)
    }
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("codegen-fixture-\(ProcessInfo.processInfo.processIdentifier)")
try? FileManager.default.removeItem(at: directory)
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let seed = UInt64(ProcessInfo.processInfo.environment["CODEGEN_FIXTURE_SEED"] ?? "") ?? 7
let script = operations(seed: seed, count: 400)
let typed = try run(applyTyped, operations: script, at: directory.appendingPathComponent("typed.strata"))
let byKey = try run(applyByKey, operations: script, at: directory.appendingPathComponent("bykey.strata"))
expect(typed == byKey, "stores differ (seed \(seed)): typed \(typed.count) objects, by key \(byKey.count); first difference: \(zip(typed, byKey).first { $0 != $1 }.map { "\($0.0)\n  vs \($0.1)" } ?? "counts")")
expect(typed.contains { $0.hasPrefix("Shelf") } && typed.contains { $0.hasPrefix("Note") }, "the script made no shelves or notes")

let found = failures.withLock { $0 }
if found.isEmpty {
    print("codegen fixture: ok (seed \(seed), \(script.count) operations, \(typed.count) objects)")
} else {
    for failure in found { print("FAIL: \(failure)") }
    exit(1)
}
