// strata-test-helper: a second process for the multi-process tests.
//
//   strata-test-helper write PATH TREE FIRST COUNT     one committed transaction per record
//   strata-test-helper rewrite PATH TREE COUNT ROUNDS  rewrites records 0..<COUNT, ROUNDS times
//   strata-test-helper hold PATH SECONDS               holds the write lock for SECONDS
//   strata-test-helper get PATH TREE KEY               prints the value of a u64 key as text
//   strata-test-helper big PATH TREE KEY BYTES         stores a value of BYTES bytes (overflow)
//   strata-test-helper timed-writes PATH TREE COUNT INTERVAL_MS   COUNT commits, INTERVAL_MS apart,
//                                                 printing "committed G T" after each returns
//                                                 (G its generation, T seconds since 1970)
//   strata-test-helper concurrency-violation object|context   touches an object (or a context) off
//                                                 its queue; traps when STRATA_CONCURRENCY_DEBUG=1
//   strata-test-helper tracked-saves PATH COUNT INTERVAL_MS   COUNT saves of one quake (CrashModel) into a
//                                                 store recording history, author "import", printing
//                                                 "saved GENERATION SECONDS" after each returns
//   strata-test-helper object-save-loop PATH FIRST BATCH   saves batches FIRST, FIRST+1, … of BATCH
//                                                 quakes into a native store (CrashModel) forever,
//                                                 printing "saved N" after each save returns
//   strata-test-helper batch-loop PATH FIRST SIZE   forever: batch-inserts batch N (SIZE quakes of
//                                                 CrashModel, no relationships; parts of 500 rows), printing "inserted N"
//                                                 when the request returns; after each odd N also
//                                                 batch-deletes batch N-1, printing "deleted N-1"
// With STRATA_HELPER_TRACKING=1, object-save-loop's store records persistent history; with
// STRATA_HELPER_STORE_TYPE=binary (or xml), object-save-loop saves into that atomic store instead.
// With STRATA_HELPER_ABANDON=1 it ends without closing the store or running exit handlers
// (commits stay in the WAL); with STRATA_HELPER_EXIT=1 it exits normally without closing it.
// Prints "ok" on success, "error: …" and exits 1 on failure.

import Foundation
import StrataStorage
import Strata
@_spi(StrataInternal) import StrataCore

func bigEndianKey(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

let arguments = Array(CommandLine.arguments.dropFirst())
func argument(_ index: Int) -> String {
    guard index < arguments.count else {
        FileHandle.standardError.write(Data("error: missing argument \(index)\n".utf8))
        exit(2)
    }
    return arguments[index]
}

/// Options of the helper's native stores: with STRATA_HELPER_TRACKING=1, persistent history.
let helperStoreOptions: [String: Any] = ProcessInfo.processInfo.environment["STRATA_HELPER_TRACKING"] == "1"
    ? [PersistentHistoryTrackingKey: true as NSNumber] : [:]

// `dangling-unretained`: an Unretained reference read after its object is gone. In the checked
// mode (-DSTRATA_CHECKS) the read traps; otherwise it would be a use after free, so it is made
// only in the checked mode (the command prints "unchecked build" and exits 3 elsewhere).
if arguments.first == "dangling-unretained" {
    #if STRATA_CHECKS
    final class Probe { let value = 42 }
    var probe: Probe? = Probe()
    let reference = Unretained(probe!)
    probe = nil
    print(reference.withObject { $0.value })
    exit(0)
    #else
    print("unchecked build")
    exit(3)
    #endif
}

if arguments.first == "tracked-saves" {
    // COUNT saves of one quake each into a native store recording history, INTERVAL_MS apart,
    // under the author "import"; after each: "saved GENERATION SECONDS" (the save's history
    // token position and the wall-clock time it returned).
    do {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: CrashModel.make())
        let store = try coordinator.addPersistentStore(type: .native, at: URL(fileURLWithPath: argument(1)),
                                                       options: [PersistentHistoryTrackingKey: true as NSNumber])
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        context.transactionAuthor = "import"
        let count = Int(argument(2))!, interval = Double(argument(3))! / 1000
        for index in 0..<count {
            try context.performAndWait {
                let quake = ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Quake"]!, insertInto: context)
                quake.setValue("t\(ProcessInfo.processInfo.processIdentifier).\(index)", forKey: "code")
                quake.setValue(Int64(index), forKey: "batch")
                try context.save()
            }
            let token = coordinator.currentPersistentHistoryToken(fromStores: [store])?.generation(inStore: store.identifier) ?? 0
            FileHandle.standardOutput.write(Data("saved \(token) \(Date().timeIntervalSince1970)\n".utf8))
            Thread.sleep(forTimeInterval: interval)
        }
        print("ok")
        exit(0)
    } catch {
        print("error: \(error)")
        exit(1)
    }
}

if arguments.first == "object-save-loop" {
    // Killed with SIGKILL by the test: every save that printed must survive, none may be partial.
    do {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: CrashModel.make())
        let type: StoreType = ["binary": .binary, "xml": .xml][ProcessInfo.processInfo.environment["STRATA_HELPER_STORE_TYPE"] ?? ""] ?? .native
        try coordinator.addPersistentStore(type: type, at: URL(fileURLWithPath: argument(1)), options: helperStoreOptions)
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        context.transactionAuthor = "import"
        let batchSize = Int(argument(3))!
        var batch = Int64(argument(2))!
        while true {
            try context.performAndWait {
                let region = ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Region"]!, insertInto: context)
                region.setValue("region \(batch)", forKey: "name")
                var quakes: [ManagedObject] = []
                for index in 0..<batchSize {
                    let quake = ManagedObject(entity: coordinator.managedObjectModel.entitiesByName["Quake"]!, insertInto: context)
                    quake.setValue("b\(batch).\(index)", forKey: "code")
                    quake.setValue(batch, forKey: "batch")
                    quake.setValue(Double(index) / 10, forKey: "magnitude")
                    quakes.append(quake)
                }
                region.setValue(Set(quakes), forKey: "quakes")
                try context.save()
                context.reset()
            }
            FileHandle.standardOutput.write(Data("saved \(batch)\n".utf8))
            batch += 1
        }
    } catch {
        print("error: \(error)")
        exit(1)
    }
}

if arguments.first == "batch-loop" {
    // Killed with SIGKILL by the test: every request that returned must survive whole, none
    // may be partial.
    do {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: CrashModel.make())
        try coordinator.addPersistentStore(type: .native, at: URL(fileURLWithPath: argument(1)))
        let context = ManagedObjectContext(.privateQueue)
        context.persistentStoreCoordinator = coordinator
        let size = Int(argument(3))!
        var batch = Int64(argument(2))!
        while true {
            try context.performAndWait {
                let rows: [[String: Any]] = (0..<size).map { ["code": "b\(batch).\($0)", "batch": batch, "magnitude": Double($0) / 10] }
                // Parts of 500 rows: a kill can fall between the parts of one transaction.
                let request = BatchInsertRequest(entityName: "Quake", objects: rows)
                request.rowsPerPart = 500
                _ = try context.execute(request)
            }
            FileHandle.standardOutput.write(Data("inserted \(batch)\n".utf8))
            if batch % 2 == 1 {
                try context.performAndWait {
                    let doomed = FetchRequest<ManagedObject>(entityName: "Quake")
                    doomed.predicate = try FetchPredicate(format: "batch == %@", batch - 1)
                    _ = try context.execute(BatchDeleteRequest(fetchRequest: doomed))
                }
                FileHandle.standardOutput.write(Data("deleted \(batch - 1)\n".utf8))
            }
            batch += 1
        }
    } catch {
        print("error: \(error)")
        exit(1)
    }
}

/// A typed class for the concurrency-violation checks of `@Managed` reads.
final class HelperQuake: ManagedObject {
    @Managed var magnitude: Double = 0
}

if arguments.first == "concurrency-violation", arguments.count > 1, arguments[1] == "typed" || arguments[1] == "prefetched" {
    // A fetched object (a prefetched fault) read through its typed @Managed property, or its
    // fault fired by the untyped path, off its context's queue.
    let model = try! ManagedObjectModel(classes: [HelperQuake.self])
    let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
    _ = try! coordinator.addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/dev/null"))
    let context = ManagedObjectContext(.privateQueue)
    context.name = "background"
    context.persistentStoreCoordinator = coordinator
    let fetched: HelperQuake = context.performAndWait {
        let quake = HelperQuake(context: context)
        quake.magnitude = 4
        try! context.save()
        context.reset()
        return try! context.fetch(FetchRequest<HelperQuake>(entityName: "HelperQuake")).first!
    }
    if arguments[1] == "typed" {
        print(fetched.magnitude)                     // off the context's queue
    } else {
        _ = try? fetched.checkedValue(forKey: "magnitude")   // off the context's queue
    }
    print("ok")
    exit(0)
}

if arguments.first == "concurrency-violation" {
    let quake = EntityDescription(name: "Quake", properties: [AttributeDescription(name: "magnitude", type: .double)])
    let coordinator = PersistentStoreCoordinator(managedObjectModel: ManagedObjectModel(entities: [quake]))
    _ = try! coordinator.addPersistentStore(type: .inMemory, at: URL(fileURLWithPath: "/dev/null"))
    let context = ManagedObjectContext(.privateQueue)
    context.name = "background"
    context.persistentStoreCoordinator = coordinator
    let object = context.performAndWait { ManagedObject(entity: quake, insertInto: context) }
    if arguments.count > 1 && arguments[1] == "context" {
        _ = context.hasChanges             // off the context's queue
    } else {
        object.setValue(4.0, forKey: "magnitude")   // off the context's queue
    }
    print("ok")
    exit(0)
}

do {
    var options = StorageOptions()
    options.busyTimeout = 30
    options.readerSlotLinger = 0.01
    let engine = try StorageEngine(path: argument(1), options: options)
    switch argument(0) {
    case "write":
        let tree = TreeName(argument(2))
        let first = UInt64(argument(3))!
        let count = UInt64(argument(4))!
        for i in first..<(first + count) {
            try engine.write { tx in try tx.openTree(tree).put(bigEndianKey(i), Array("from \(getpid()) #\(i)".utf8)) }
        }
    case "rewrite":
        let tree = TreeName(argument(2))
        let count = UInt64(argument(3))!
        let rounds = Int(argument(4))!
        for round in 0..<rounds {
            try engine.write { tx in
                let t = try tx.openTree(tree)
                for i in 0..<count { try t.put(bigEndianKey(i), Array("round \(round) #\(i) ".utf8) + [UInt8](repeating: UInt8(round), count: 40)) }
            }
        }
    case "timed-writes":
        let tree = TreeName(argument(2))
        let count = UInt64(argument(3))!
        let interval = UInt32(argument(4))!
        for i in 0..<count {
            let generation = try engine.write { tx in
                try tx.openTree(tree).put(bigEndianKey(i), Array("timed #\(i)".utf8))
                return tx.generation
            }
            FileHandle.standardOutput.write(Data("committed \(generation.rawValue) \(Date().timeIntervalSince1970)\n".utf8))
            usleep(interval * 1000)
        }
    case "hold":
        let seconds = Double(argument(2))!
        try engine.write { tx in
            _ = try tx.openTree("held")
            FileHandle.standardOutput.write(Data("holding\n".utf8))
            Thread.sleep(forTimeInterval: seconds)
        }
    case "big":
        let size = Int(argument(4))!
        try engine.write { tx in
            try tx.openTree(TreeName(argument(2))).put(bigEndianKey(UInt64(argument(3))!), (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        }
    case "get":
        let value = try engine.read { try $0.treeIfPresent(TreeName(argument(2)))?.get(bigEndianKey(UInt64(argument(3))!)) }
        FileHandle.standardOutput.write(Data((value.map { String(decoding: $0, as: UTF8.self) } ?? "(none)").utf8 + [10]))
    default:
        FileHandle.standardError.write(Data("error: unknown command \(argument(0))\n".utf8))
        exit(2)
    }
    if ProcessInfo.processInfo.environment["STRATA_HELPER_ABANDON"] == "1" {
        // End without closing and without exit handlers: the WAL keeps its commits (as after a
        // crash).
        FileHandle.standardOutput.write(Data("ok\n".utf8))
        _exit(0)
    }
    if ProcessInfo.processInfo.environment["STRATA_HELPER_EXIT"] == "1" {
        // A normal exit without closing the store (as an app that returns from main).
        FileHandle.standardOutput.write(Data("ok\n".utf8))
        exit(0)
    }
    engine.close()
    FileHandle.standardOutput.write(Data("ok\n".utf8))
} catch {
    FileHandle.standardOutput.write(Data("error: \(error)\n".utf8))
    exit(1)
}

/// The model of the object-level crash test (the test builds the same one).
enum CrashModel {
    static func make() -> ManagedObjectModel {
        let quake = EntityDescription(name: "Quake")
        let region = EntityDescription(name: "Region")
        let quakes = RelationshipDescription(name: "quakes", destination: quake, toMany: true)
        let owner = RelationshipDescription(name: "region", destination: region)
        quakes.inverseRelationship = owner
        owner.inverseRelationship = quakes
        quake.properties = [AttributeDescription(name: "code", type: .string), AttributeDescription(name: "batch", type: .integer64),
                            AttributeDescription(name: "magnitude", type: .double), owner]
        quake.uniquenessConstraints = [["code"]]
        quake.indexes = [FetchIndexDescription(name: "byBatch", elements: [FetchIndexElementDescription(property: quake.properties[1])])]
        region.properties = [AttributeDescription(name: "name", type: .string), quakes]
        return ManagedObjectModel(entities: [quake, region])
    }
}
