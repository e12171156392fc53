// ManagedObjectContext+Objects: registering, inserting, deleting and looking up objects, and firing
// faults.
//
// Owns: the registry (one object per ID per context), inserting and deleting (through the
// ChangeTracker, which owns the sets), delete rules applied at delete time (nullify, cascade; deny
// is checked by save), and fault fulfilment from the parent context or the coordinator, with
// the errors of faults that cannot be fulfilled. Never writes to a store.

import Foundation
@_spi(StrataInternal) import StrataCore

extension ManagedObjectContext {
    // MARK: Queries

    /// Objects inserted since the last save.
    public var insertedObjects: Set<ManagedObject> { assertOnQueue("insertedObjects"); return changeTracker.inserted.set }
    /// Saved objects changed since the last save.
    public var updatedObjects: Set<ManagedObject> { assertOnQueue("updatedObjects"); return changeTracker.updated.set }
    /// Objects deleted since the last save.
    public var deletedObjects: Set<ManagedObject> { assertOnQueue("deletedObjects"); return changeTracker.deleted.set }
    /// Whether anything was inserted, changed or deleted since the last save.
    public var hasChanges: Bool {
        assertOnQueue("hasChanges")
        return !changeTracker.isEmpty
    }

    /// Why faults of this context could not be fulfilled, by object: a read error (I/O, a
    /// corrupt page) or, with `shouldDeleteInaccessibleFaults` false, a row that no longer
    /// exists. Such an object reads as its entity's defaults (property getters never trap);
    /// ``ManagedObject/checkedValue(forKey:)`` throws its error, and a save that would write it is
    /// refused with that error. ``refresh(_:mergeChanges:)`` forgets the error and lets the object
    /// be read again; so does ``reset()``.
    ///
    /// ```swift
    /// let place = quake.place                        // "" if its row could not be read
    /// if let error = context.faultErrors[quake.objectID] { report(error) }
    /// ```
    public var faultErrors: [ManagedObjectID: StrataError] {
        assertOnQueue("faultErrors")
        return faultErrorsByID
    }
    /// Every object the context currently knows: changed objects and objects referenced outside
    /// the context (unchanged objects nothing else holds are released first).
    public var registeredObjects: Set<ManagedObject> {
        assertOnQueue("registeredObjects")
        sweepRegistry()
        return Set(registry.objects)
    }

    /// The registered object with `objectID`, or nil (never creates a fault).
    public func registeredObject(for objectID: ManagedObjectID) -> ManagedObject? {
        assertOnQueue("registeredObject(for:)")
        return registry[objectID]
    }

    /// The entity of this context's model an ID's objects get (IDs may come from another model).
    func modelEntity(of id: ManagedObjectID) -> EntityDescription {
        modelEntity(of: id, modelSerial: persistentStoreCoordinator?.modelSerial)
    }

    /// `modelEntity(of:)` with the serial of the context's model looked up once by the caller (a
    /// fetch): IDs of this model's entities, the usual case, need no lookup by name.
    @inline(__always)
    func modelEntity(of id: ManagedObjectID, modelSerial: UInt64?) -> EntityDescription {
        guard let modelSerial, id.entity.modelSerial != modelSerial, let model else { return id.entity }
        return model.entitiesByName[id.entity.name] ?? id.entity
    }

    /// A new fault for `id`, of the entity `modelEntity(of:modelSerial:)` names: in the usual case
    /// the ID's own entity, borrowed rather than retained (a fetch makes one fault per row).
    @inline(__always)
    func makeFault(for id: ManagedObjectID, modelSerial: UInt64?) -> ManagedObject {
        if let modelSerial, !id.withEntity({ $0.modelSerial == modelSerial }) {
            return ManagedObject.makeFault(entity: modelEntity(of: id, modelSerial: modelSerial), id: id)
        }
        return id.withEntity { ManagedObject.makeFault(entity: $0, id: id) }
    }

    /// The object with `objectID`: the registered one, or a new fault (not checked against the store).
    public func object(with objectID: ManagedObjectID) -> ManagedObject {
        assertOnQueue("object(with:)")
        if let object = registry[objectID] { return object }
        let object = makeFault(for: objectID, modelSerial: coordinatorModelSerial)
        register(object)
        return object
    }

    /// The object with `objectID`, loaded; throws `objectNotFound` if no store has it.
    public func existingObject(with objectID: ManagedObjectID) throws -> ManagedObject {
        assertOnQueue("existingObject(with:)")
        if let object = registry[objectID], !object.state.isFault {
            if object.state.isMissing {
                throw StrataError(.objectNotFound, "\(objectID) no longer exists in its store (deleted elsewhere)")
            }
            if object.state == .unreadable { try fulfillFault(object) }
            return object
        }
        guard !objectID.isTemporaryID else {
            throw StrataError(.objectNotFound, "\(objectID) is a temporary ID not registered in \(debugName)")
        }
        let object = self.object(with: objectID)
        try fulfillFault(object, markingFailures: false)
        return object
    }

    // MARK: Registry

    func register(_ object: ManagedObject) {
        object.contextHandle = handle   // not through the Optional(self) setter: a context has weak references, so its retains are slow
        registry[object.objectID] = object
        // An inserted object is kept alive until saved; the save hands it to the sweeps then.
        if !object.state.isInserted { releaseCandidates.append(object.objectID) }
        registrationsSinceFullSweep += 1
        if retainsRegisteredObjects { retained[ObjectIdentifier(object)] = object }
        if registry.count > registrySweepThreshold { sweepRegistry() }
    }

    // The registry holds its objects strongly (a weak reference would move every retain and
    // release of an object to the runtime's slow path). An object only the registry references
    // is unused: unchanged (changed objects are also held by the change sets or `retained`) and
    // out of the caller's hands, so a sweep releases it. Like an autorelease pool on Darwin, an
    // object dropped inside a perform block is released by the time the block has returned:
    // - when a block ends, and when a fetch or a save starts, the candidates (objects registered
    //   or saved since the last sweep) are checked, oldest first, so that objects prefetched for
    //   a released holder follow it;
    // - every object is checked when a block ends after registering a quarter of the registry
    //   or more, when the registry has doubled, and for `registeredObjects`/`refreshAllObjects`;
    // - batched results check the objects of a batch they drop.
    // Each check is O(1), and full sweeps are paid for by the registrations before them.

    /// Releases every object only the registry references (again while that releases more: a
    /// released holder's prefetched objects).
    func sweepRegistry() {
        for _ in 0..<4 {
            var unused: [ManagedObjectID] = []
            var index = registry.startIndex
            while index != registry.endIndex {
                if registry.holdsOnlyReference(at: index) { unused.append(registry.id(at: index)) }
                registry.formIndex(after: &index)
            }
            // Found in hash order; released in address order (see putInAddressOrder).
            var released = unused.compactMap { takeIfUnused($0) }
            Self.putInAddressOrder(&released)
            released.removeAll()
            if unused.isEmpty { break }
        }
        releaseCandidates.removeAll(keepingCapacity: releaseCandidates.count <= 1 << 16)
        registrationsSinceFullSweep = 0
        registrySweepThreshold = max(1024, registry.count * 2)
    }

    /// The sweep at the end of a perform block: a full one when enough was registered since the
    /// last, else the candidates.
    func sweepAfterBlock() {
        if registrationsSinceFullSweep > 0 && registrationsSinceFullSweep * 4 >= registry.count {
            sweepRegistry()
        } else {
            sweepCandidates()
        }
    }

    /// Releases the candidates (objects registered or saved since the last sweep) that only the
    /// registry references.
    func sweepCandidates() {
        guard !releaseCandidates.isEmpty else { return }
        // Releasing an object never registers another, so the list is not appended to meanwhile;
        // it keeps its capacity for the next registrations.
        for index in releaseCandidates.indices { releaseIfUnused(releaseCandidates[index]) }
        releaseCandidates.removeAll(keepingCapacity: releaseCandidates.count <= 1 << 16)
    }

    /// Makes saved objects (no longer kept by the context) candidates for the next sweep.
    func noteUnretained(_ objects: some Sequence<ManagedObject>) {
        for object in objects { releaseCandidates.append(object.objectID) }
    }

    /// Releases the objects of `ids` that only the registry references (batched results dropping
    /// a batch).
    func releaseUnusedObjects(_ ids: some Sequence<ManagedObjectID>) {
        for id in ids { releaseIfUnused(id) }
    }

    /// Removes `id`'s object from the registry when nothing else references it.
    private func releaseIfUnused(_ id: ManagedObjectID) {
        _ = takeIfUnused(id)
    }

    /// Removes the object of `id` from the registry if nothing else references it, and returns
    /// it (the caller then holds its last reference).
    private func takeIfUnused(_ id: ManagedObjectID) -> ManagedObject? {
        guard let index = registry.index(forKey: id), registry.holdsOnlyReference(at: index) else { return nil }
        let object = registry.remove(at: index)
        object.contextHandle = nil
        return object
    }

    /// Orders many objects by their address, so that dropping the array (when it holds their
    /// last references) frees them in the order they lie in memory: objects a fetch made, their
    /// values and strings lie in fetch order, and the allocator frees neighbouring blocks into
    /// the block freed just before instead of jumping across the heap (a reset of 100,000
    /// fetched objects took 87 ms in hash order, 30 ms so). Few objects are left as they are.
    static func putInAddressOrder(_ objects: inout [ManagedObject]) {
        guard objects.count >= 1024 else { return }
        var keyed = objects.indices.map { index in
            RadixSort.Item(first: UInt64(UInt(bitPattern: ObjectIdentifier(objects[index]))), index: index)
        }
        RadixSort.sort(&keyed)
        objects = keyed.map { objects[$0.index] }
    }

    /// Whether the registered object of `id` is referenced outside the registry.
    func isInUse(_ id: ManagedObjectID) -> Bool {
        guard let index = registry.index(forKey: id) else { return false }
        return !registry.holdsOnlyReference(at: index)
    }

    func unregister(_ object: ManagedObject) {
        registry.remove(object)
        retained[ObjectIdentifier(object)] = nil
        changeTracker.forget(object)
    }

    /// Keeps `object` alive until the next save (an inserted object deleted again, which is in
    /// no change set). Pending inserts, updates and deletes need not be retained: the inserted,
    /// updated and deleted sets hold them.
    func retain(_ object: ManagedObject) { retained[ObjectIdentifier(object)] = object }

    /// Called when `object` left the change sets unsaved (its changes were reverted or
    /// discarded): it becomes a sweep candidate, or stays retained if transient changes are left.
    func leftChangeSets(_ object: ManagedObject) {
        if object.hasChanges { retain(object) } else if !retainsRegisteredObjects { releaseCandidates.append(object.objectID) }
    }

    /// The pending inserts in the order they were inserted (permanent keys follow it).
    func insertedInOrder() -> [ManagedObject] { changeTracker.insertedInOrder(handle: handle) }

    /// Every object with unsaved changes: the retained ones and the pending inserts, updates and
    /// deletes (an object may come more than once).
    func forEachChangedObject(_ body: (ManagedObject) -> Void) {
        for object in retained.values { body(object) }
        for object in changeTracker.inserted.objects { body(object) }
        for object in changeTracker.updated.objects { body(object) }
        for object in changeTracker.deleted.objects { body(object) }
    }

    // MARK: Insert and delete

    /// Inserts an object created without a context (or re-inserts a deleted one).
    public func insert(_ object: ManagedObject) {
        assertOnQueue("insert(_:)")
        if object.state.isDeleted, object.contextHandle === handle {
            undelete(object)
            return
        }
        precondition(object.contextHandle === handle || object.managedObjectContext == nil,
                     "Strata: \(object.objectID) already belongs to another context")
        guard !object.state.isInserted else { return }
        trackInserted(object)
        undoManager?.registerUndo(withTarget: self) { context in context.delete(object) }
        object.awakeFromInsert()
    }

    /// Registers a new object as inserted (numbered in insertion order, kept alive until saved:
    /// the inserted set holds it, so it is not in `retained` as well).
    func trackInserted(_ object: ManagedObject) {
        object.state = .inserted
        register(object)
        changeTracker.insert(object)
    }

    /// Marks `object` deleted (inserted objects are simply removed) and applies its delete rules:
    /// nullify removes it from inverses, cascade deletes the related objects; deny is checked by
    /// `save()`.
    public func delete(_ object: ManagedObject) {
        assertOnQueue("delete(_:)")
        guard object.contextHandle === handle, !object.state.isDeleted else { return }
        if object.state.isFault { try? fulfillFault(object) }
        if object.state.isDeleted { return } // an inaccessible fault became deleted
        object.prepareForDeletion()
        // An inserted object is in no change set any more: kept alive until the save drops it.
        if object.state.isInserted { retain(object) }
        changeTracker.delete(object)
        undoManager?.registerUndo(withTarget: self) { context in context.undelete(object) }
        applyDeleteRules(object)
    }

    /// Notes a deleted object that was just related to again (ManagedObject.linkInverse).
    func noteRelinkedAfterDelete(_ object: ManagedObject) {
        relinkedAfterDelete[object.objectID] = object
    }

    /// Applies the delete rules of objects deleted before something was related to them, as
    /// Core Data propagates deletes when it processes pending changes: a new object pointed at
    /// a deleted one loses that reference (nullify), is deleted too (cascade), or fails the save
    /// (deny). Without it a saved row could refer to a row the same save deletes.
    func propagateDeletesToRelinkedObjects() {
        guard !relinkedAfterDelete.isEmpty else { return }
        let relinked = relinkedAfterDelete.values.sorted { ($0.objectID.primaryKey ?? .max) < ($1.objectID.primaryKey ?? .max) }
        relinkedAfterDelete = [:]
        for object in relinked where object.state.isDeleted && !object.state.isMissing && object.contextHandle === handle {
            applyDeleteRules(object)
        }
    }

    private func applyDeleteRules(_ object: ManagedObject) {
        for (slot, relationship) in object.entity.relationshipSlots {
            let related = object.values[slot].referencedObjectIDs
            switch relationship.deleteRule {
            case .noActionDeleteRule, .denyDeleteRule:
                continue
            case .nullifyDeleteRule:
                guard let inverse = relationship.inverseRelationship else { continue }
                // A related object this context has not changed is read as stored first: an
                // older copy may not refer back yet, and the stored row must let go.
                for id in related {
                    guard let target = try? current(id, storeHasIt: true) else { continue }
                    noteIfOlder(target, inverse, than: object)
                    try? target.unlinkInverse(inverse, from: object)
                }
            case .cascadeDeleteRule:
                for id in related {
                    let target = (try? current(id, storeHasIt: true)) ?? self.object(with: id)
                    if let inverse = relationship.inverseRelationship { try? target.unlinkInverse(inverse, from: object) }
                    delete(target)
                }
            }
        }
    }

    /// A related object with changes of its own is not read again from the store: when it does
    /// not refer back to the deleted object although the deleted object (read later) refers to
    /// it, its copy is older than the store's row, which may still list the deleted object. It
    /// is written by the save then, whatever its own changes come to, so the store's version
    /// check finds the newer row and the conflict is settled by the merge policy (whose repair
    /// lets the deleted object go) instead of the row keeping a reference to nothing.
    private func noteIfOlder(_ target: ManagedObject, _ inverse: RelationshipDescription, than deleted: ManagedObject) {
        guard target.hasChanges, !target.state.isInserted, let slot = target.entity.slotIndex[inverse.name] else { return }
        let refersBack: Bool
        switch target.values[slot] {
        case .objectID(let id): refersBack = id == deleted.objectID
        case .objectIDs(let ids): refersBack = ids.contains(deleted.objectID)
        default: refersBack = false
        }
        if !refersBack { staleByDeletes[target.objectID] = target }
    }

    /// Reverses a delete not yet saved (undo, re-insert).
    func undelete(_ object: ManagedObject) {
        guard object.state == .deleted || object.state == .insertedThenDeleted else { return }
        changeTracker.undelete(object)
        if object.state == .loaded {
            if !object.changedSlots.isEmpty { changeTracker.fileUpdated(object) } else { leftChangeSets(object) }
        }
        undoManager?.registerUndo(withTarget: self) { context in context.delete(object) }
    }

    /// Called by every property write: tracks the object as updated and records undo.
    func objectDidChange(_ object: ManagedObject, slot: Int, from old: RowValue) {
        trackUpdated(object)
        if let undoManager {
            undoManager.registerUndo(withTarget: self) { _ in object.setPrimitive(old, slot: slot) }
        }
    }

    /// Files a changed object under updated (or out of it, when its values are back to the
    /// committed ones): the updated set keeps it alive until saved.
    private func trackUpdated(_ object: ManagedObject) {
        if object.state == .loaded || object.state == .unreadable {
            if !object.changedSlots.isEmpty { changeTracker.fileUpdated(object) }
            else if changeTracker.unfileUpdated(object) { leftChangeSets(object) }
        }
        changeTracker.notePending(updated: object)
    }

    /// The updated objects in primary-key order (see `ChangeTracker.updatedInKeyOrder`).
    func updatedInKeyOrder() -> [ManagedObject] { changeTracker.updatedInKeyOrder() }

    /// Called by the in-place to-many edits: tracks the object and records the inverse edit for undo.
    func toManyDidChange(_ object: ManagedObject, slot: Int, added: ManagedObjectID?, removed: ManagedObjectID?,
                         removedAt index: Int? = nil) {
        trackUpdated(object)
        guard let undoManager else { return }
        let ordered = (object.entity.slots[slot] as? RelationshipDescription)?.isOrdered ?? false
        undoManager.registerUndo(withTarget: self) { _ in
            if let added { object.removeFromToMany(added, slot: slot, ordered: ordered) }
            if let removed { object.appendToMany(removed, slot: slot, at: index) }
        }
    }

    // MARK: Faults

    /// Loads a fault's values from the parent context or the coordinator. A row that no longer
    /// exists makes the object deleted-and-inaccessible (`.missing`) when
    /// `shouldDeleteInaccessibleFaults`; otherwise, and when reading the row fails, the object
    /// becomes `.unreadable` (its defaults), the error is kept in `faultErrors` and thrown, now
    /// and at every later call until the object is refreshed. `existingObject(with:)` passes
    /// `markingFailures: false`: a missing row then only throws, and the object stays a fault.
    func fulfillFault(_ object: ManagedObject, markingFailures: Bool = true) throws {
        switch object.state {
        case .fault: break
        case .prefetchedFault:
            if handle.prefetchIsCurrent(stamp: object.prefetchStamp, pin: object.prefetchPin) {
                object.fireFromPrefetchedValues()
                return
            }
            object.state = .fault
            object.values = []
        case .unreadable:
            throw faultErrorsByID[object.objectID] ?? StrataError(.objectNotFound, "\(object.objectID) could not be read")
        default:
            return
        }
        let snapshot: StoreRow?
        do {
            snapshot = try loadSnapshot(for: object.objectID)
        } catch {
            guard markingFailures else { throw error }
            throw markUnreadable(object, because: error)
        }
        if let snapshot {
            object.values = snapshot.values
            object.markValuesCommitted()
            object.rowVersion = snapshot.version
            object.state = .loaded
            object.awakeFromFetch()
            return
        }
        let missing = StrataError(.objectNotFound, "\(object.objectID) does not exist in any store of \(debugName) (deleted or never saved)")
        guard markingFailures else { throw missing }
        guard shouldDeleteInaccessibleFaults else { throw markUnreadable(object, because: missing) }
        object.values = object.entity.defaultRow
        object.committedValues = nil
        object.state = .missing
    }

    /// Makes a fault that cannot be fulfilled `.unreadable` (its entity's defaults), keeps the
    /// error for `faultErrors`, and returns it for the caller to throw.
    @discardableResult
    func markUnreadable(_ object: ManagedObject, because error: any Error) -> StrataError {
        let reported = (error as? StrataError) ?? StrataError(.io, "reading \(object.objectID): \(error)", cause: error)
        object.values = object.entity.defaultRow
        object.committedValues = nil
        object.state = .unreadable
        faultErrorsByID[object.objectID] = reported
        return reported
    }

    /// The identity of the token this context reads at now (nil when unpinned or not yet pinned).
    var currentPinIdentity: ObjectIdentifier? {
        if case .pinned(let token) = generationPin { return ObjectIdentifier(token) }
        return nil
    }

    /// A pin identity as a number (0: unpinned), as faults keep it.
    static func pinNumber(_ pin: ObjectIdentifier?) -> UInt { pin.map { UInt(bitPattern: $0) } ?? 0 }

    /// The row of `id` as this context sees it: the parent's current object state, or the store's.
    func loadSnapshot(for id: ManagedObjectID) throws -> StoreRow? {
        if let parent {
            return try parent.performAndWait { try parent.snapshotForChild(id) }
        }
        guard let coordinator = persistentStoreCoordinator else {
            throw StrataError(.noStore, "\(debugName) has neither a coordinator nor a parent")
        }
        return try coordinator.row(for: id, pin: try readPin())
    }

    /// The state of `id` in this context for a child: its unsaved values if registered and loaded.
    func snapshotForChild(_ id: ManagedObjectID) throws -> StoreRow? {
        hasChildren = true
        let id = idAliases[id] ?? id
        if let object = registry[id], !object.state.isFault {
            if object.state.isDeleted { return nil }
            return StoreRow(id: id, version: object.rowVersion, values: object.values)
        }
        return try loadSnapshot(for: id)
    }

    // MARK: Permanent IDs

    /// Gives inserted objects permanent IDs before they are saved.
    public func obtainPermanentIDs(for objects: [ManagedObject]) throws {
        assertOnQueue("obtainPermanentIDs(for:)")
        let temporary = objects.filter(\.objectID.isTemporaryID)
        guard !temporary.isEmpty else { return }
        guard let coordinator = persistentStoreCoordinator else {
            throw StrataError(.noStore, "\(debugName) has no coordinator to assign permanent IDs")
        }
        let ids = try coordinator.permanentIDs(for: temporary.map(\.entity))
        // Fetched results controllers hear of the new IDs (their snapshots name objects by ID).
        let oldIDs = changeObservers.isEmpty ? [] : temporary.map(\.objectID)
        defer { if !oldIDs.isEmpty { notifyChangeObservers(ofNewIDs: Array(zip(temporary, oldIDs))) } }
        // Without children (aliases) or objects that can hold IDs, only the registry changes.
        if !hasChildren && (model?.hasReferenceSlots == false || !hasChangedObjectsWithReferences) {
            // Each entry is removed before its replacement goes in, so the table never grows
            // (reserving room for both would rehash every registered object).
            for (object, id) in zip(temporary, ids) {
                guard let index = registry.index(forKey: object.objectID), registry.object(at: index) === object else { continue }
                registry.remove(at: index)
                object.objectID = id
                registry[id] = object
            }
            return
        }
        var mapping: [ManagedObjectID: ManagedObjectID] = [:]
        for (object, id) in zip(temporary, ids) { mapping[object.objectID] = id }
        remapIDs(mapping)
    }

    /// Whether a changed object has slots that can hold object IDs.
    private var hasChangedObjectsWithReferences: Bool {
        func holdsIDs(_ object: ManagedObject) -> Bool { !object.entity.referenceSlots.isEmpty }
        return retained.values.contains(where: holdsIDs) || changeTracker.inserted.contains(where: holdsIDs)
            || changeTracker.updated.contains(where: holdsIDs) || changeTracker.deleted.contains(where: holdsIDs)
    }

    /// Replaces temporary IDs in the registry and in every changed object's relationship values.
    func remapIDs(_ mapping: [ManagedObjectID: ManagedObjectID]) {
        guard !mapping.isEmpty else { return }
        if hasChildren { for (old, new) in mapping { idAliases[old] = new } }
        for (old, new) in mapping {
            guard let object = registry.removeValue(forKey: old) else { continue }
            object.objectID = new
            registry[new] = object
        }
        // Only slots that can hold object IDs change; objects without any are left alone.
        forEachChangedObject { object in
            guard !object.state.isFault else { return }
            for slot in object.entity.referenceSlots {
                let value = object.values[slot]
                let remapped = value.remapped(mapping)
                let committed = object.committedValue(at: slot)
                if remapped != value { object.values[slot] = remapped }
                if let committed {
                    let remappedCommitted = committed.remapped(mapping)
                    if remappedCommitted != committed || remapped != value { object.replaceCommittedValue(at: slot, with: remappedCommitted) }
                }
            }
        }
    }
}

extension RowValue {
    /// The value with each ID `transform` moves replaced (others kept).
    func rebound(_ transform: (ManagedObjectID) -> ManagedObjectID?) -> RowValue {
        switch self {
        case .objectID(let id): return transform(id).map(RowValue.objectID) ?? self
        case .objectIDs(let ids): return .objectIDs(ids.map { transform($0) ?? $0 })
        default: return self
        }
    }

    func remapped(_ mapping: [ManagedObjectID: ManagedObjectID]) -> RowValue {
        switch self {
        case .objectID(let id): return mapping[id].map(RowValue.objectID) ?? self
        case .objectIDs(let ids):
            guard ids.contains(where: { mapping[$0] != nil }) else { return self }
            // Two IDs may now name the same object (a duplicate folded into a stored row).
            var seen: Set<ManagedObjectID> = []
            return .objectIDs(ids.map { mapping[$0] ?? $0 }.filter { seen.insert($0).inserted })
        default: return self
        }
    }
}
