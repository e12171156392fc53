// StoreOptionKeys: the option keys every store type may read, as Core Data names them.
//
// Owns: the keys of the options dictionary given to `addPersistentStore` (and set on a
// `PersistentStoreDescription`). Keys one store type alone reads live beside that store
// (`PageCacheSizeOptionKey` in StrataNativeStore). Never reads options itself.

/// Option key: refuse saves into the store (NSNumber Bool; Core Data's
/// `NSReadOnlyPersistentStoreOption`).
public let ReadOnlyPersistentStoreOption = "ReadOnly"
/// Option key: seconds to wait for another process's write lock (NSNumber Double; Core Data's
/// `NSPersistentStoreTimeoutOption`).
public let PersistentStoreTimeoutOption = "Timeout"
/// Option key: migrate a store written with another model version when it is added (NSNumber Bool).
public let MigratePersistentStoresAutomaticallyOption = "MigratePersistentStoresAutomaticallyOption"
/// Option key: infer the mapping between the two models for such a migration (NSNumber Bool).
public let InferMappingModelAutomaticallyOption = "InferMappingModelAutomaticallyOption"
/// Option key: record persistent history for the store (NSNumber Bool).
public let PersistentHistoryTrackingKey = "PersistentHistoryTracking"
/// Option key: post `.persistentStoreRemoteChange` after other coordinators' saves (NSNumber Bool).
public let PersistentStoreRemoteChangeNotificationPostOptionKey = "PersistentStoreRemoteChangeNotificationOption"
/// Option key: the most concurrent readers of a store (NSNumber Int; default 4, 1 = serial).
public let PersistentStoreConnectionPoolMaxSizeKey = "PersistentStoreConnectionPoolMaxSize"
