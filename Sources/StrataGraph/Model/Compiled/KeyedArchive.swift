// KeyedArchive: an NSKeyedArchiver archive (a binary property list with `$archiver`, `$top` and
// `$objects`), read object by object: the form of Xcode's compiled models (`.mom`) and of the
// model a Core Data SQLite store keeps in `Z_MODELCACHE`.
//
// Owns: resolving UIDs to archived objects, their class names and fields, and reading the
// Foundation containers and strings an archive holds (NSArray/NSSet/NSDictionary and their
// mutable forms, NSKnownKeysDictionary1, NSString/NSMutableString). Never decodes a class it
// does not know into objects (CompiledModelReader does that for the model's classes); every
// malformed reference is a `modelFile` error naming the file.

import Foundation
import StrataCore

struct KeyedArchive {
    typealias Value = BinaryPropertyList.Value

    /// One archived object: its UID, class name and fields (values as the property list holds
    /// them: scalars inline, objects as `.uid`).
    struct Object {
        let uid: Int
        let className: String
        let fields: [String: Value]

        subscript(_ key: String) -> Value? { fields[key] }
    }

    let file: String
    private let plist: BinaryPropertyList
    /// `$objects`: property-list indexes by UID.
    private let objects: [Int]
    /// The UID of the root object (`$top.root`).
    let root: Int

    init(_ bytes: [UInt8], file: String) throws {
        self.file = file
        let plist = try BinaryPropertyList(bytes, file: file)
        self.plist = plist
        func fail(_ problem: String) -> StrataError { StrataError(.modelFile, "\(file): not a keyed archive: \(problem)") }
        guard case .dictionary(let top) = plist.objects[plist.top] else { throw fail("the top object is not a dictionary") }
        var entries: [String: Value] = [:]
        for (key, value) in top {
            if case .string(let name) = plist.objects[key] { entries[name] = plist.objects[value] }
        }
        guard case .array(let objects)? = entries["$objects"] else { throw fail("it has no $objects array") }
        guard case .dictionary(let rootEntries)? = entries["$top"],
              let rootValue = rootEntries.first(where: { plist.objects[$0.key] == .string("root") }).map({ plist.objects[$0.value] }),
              case .uid(let rootUID) = rootValue, rootUID < UInt64(objects.count) else {
            throw fail("$top has no root object")
        }
        self.objects = objects
        root = Int(rootUID)
    }

    private func fail(_ problem: String) -> StrataError { StrataError(.modelFile, "\(file): a damaged compiled model: \(problem)") }

    /// The property-list value an archive UID names.
    private func raw(_ uid: Int) throws -> Value {
        guard uid >= 0, uid < objects.count else { throw fail("UID \(uid) is outside $objects (\(objects.count) objects)") }
        return plist.objects[objects[uid]]
    }

    /// The UID in `value`, nil for none or `$null` (UID 0).
    func uid(_ value: Value?) -> Int? {
        guard case .uid(let uid)? = value, uid > 0, uid < UInt64(objects.count) else { return nil }
        return Int(uid)
    }

    /// The archived object at `uid` (nil for `$null` or a value that is not an object).
    func object(_ reference: Int?) throws -> Object? {
        guard let reference, reference > 0 else { return nil }
        guard case .dictionary(let pairs) = try raw(reference) else { return nil }
        var fields: [String: Value] = [:]
        for (key, value) in pairs {
            guard case .string(let name) = plist.objects[key] else { throw fail("object \(reference) has a key that is not a string") }
            fields[name] = plist.objects[value]
        }
        guard let classUID = uid(fields["$class"]), case .dictionary(let classPairs) = try raw(classUID),
              let namePair = classPairs.first(where: { plist.objects[$0.key] == .string("$classname") }),
              case .string(let className) = plist.objects[namePair.value] else {
            throw fail("object \(reference) has no class")
        }
        return Object(uid: reference, className: className, fields: fields)
    }

    /// The object `value` refers to.
    func object(_ value: Value?) throws -> Object? { try object(uid(value)) }

    /// A string: inline, a UID of a string object, or an NSString/NSMutableString.
    func string(_ value: Value?) throws -> String? {
        switch value {
        case .string(let text)?: return text
        case .uid?:
            guard let uid = uid(value) else { return nil }
            if case .string(let text) = try raw(uid) { return text }
            guard let object = try object(uid) else { return nil }
            if case .string(let text)? = object["NS.string"] { return text }
            if case .data(let bytes)? = object["NS.bytes"] { return String(decoding: bytes, as: UTF8.self) }
            return nil
        default: return nil
        }
    }

    func integer(_ value: Value?) -> Int64? {
        switch value {
        case .integer(let v)?: return v
        case .bool(let v)?: return v ? 1 : 0
        case .real(let v)? where v.rounded() == v && abs(v) < 9e18: return Int64(v)
        default: return nil
        }
    }

    func bool(_ value: Value?) -> Bool {
        switch value {
        case .bool(let v)?: return v
        case .integer(let v)?: return v != 0
        default: return false
        }
    }

    /// The value at `uid` when it is a scalar stored as an object of its own (a default value).
    func scalar(_ value: Value?) throws -> Value? {
        guard let uid = uid(value) else { return value.flatMap { if case .uid = $0 { nil } else { $0 } } }
        let stored = try raw(uid)
        if case .dictionary = stored { return nil }
        return stored
    }

    /// The UIDs in an NSArray/NSSet (and mutable forms): `NS.objects`.
    func members(_ value: Value?) throws -> [Int] {
        guard let object = try object(value) else { return [] }
        return try references(object["NS.objects"], in: object)
    }

    /// The (key, value) UIDs of an NSDictionary (or NSMutableDictionary, NSKnownKeysDictionary1).
    func entries(_ value: Value?) throws -> [(key: Int, value: Int)] {
        guard let object = try object(value) else { return [] }
        let keys: [Int], values: [Int]
        if object.className == "NSKnownKeysDictionary1" {
            guard let mapping = try self.object(object["searchMapping"]) else { throw fail("dictionary \(object.uid) has no key mapping") }
            keys = try members(mapping["keys"])
            values = try members(object["values"])
        } else {
            keys = try references(object["NS.keys"], in: object)
            values = try references(object["NS.objects"], in: object)
        }
        guard keys.count == values.count else { throw fail("dictionary \(object.uid) has \(keys.count) keys and \(values.count) values") }
        return Array(zip(keys, values).map { (key: $0, value: $1) })
    }

    /// The UIDs listed in an `NS.objects`/`NS.keys` array.
    private func references(_ value: Value?, in object: Object) throws -> [Int] {
        guard let value else { return [] }
        guard case .array(let indexes) = value else { throw fail("object \(object.uid)'s list is not an array") }
        return try indexes.map { index in
            guard case .uid(let uid) = plist.objects[index], uid < UInt64(objects.count) else { throw fail("object \(object.uid) lists a value that is not a UID") }
            return Int(uid)
        }
    }
}
