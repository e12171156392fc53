// ManagedObjectContext+FetchedProperties: reading a fetched property of an object.
//
// Owns: evaluating a FetchedPropertyDescription for one object in its context (its fetch request
// with `$FETCH_SOURCE` = the object and `$FETCHED_PROPERTY` = the property's name, unsaved changes
// included) and keeping the result until the object is refreshed or the context reset, as Core
// Data does. Never stores anything.

import Foundation

extension ManagedObject {
    /// The value of the fetched property `property`: the objects its request fetches for this object.
    func fetchedValue(_ property: FetchedPropertyDescription) throws -> [ManagedObject] {
        guard let context = managedObjectContext else {
            throw StrataError(.invalidArgument, "\(entity.name).\(property.name) is a fetched property: the object must be in a context to read it")
        }
        return try context.fetchedPropertyValue(property, of: self)
    }
}

extension ManagedObjectContext {
    func fetchedPropertyValue(_ property: FetchedPropertyDescription, of object: ManagedObject) throws -> [ManagedObject] {
        if let cached = fetchedPropertyValues[object.objectID]?[property.name] { return cached }
        guard let template = property.fetchRequest else {
            throw StrataError(.invalidArgument, "\(object.entity.name).\(property.name): the fetched property has no fetch request")
        }
        let request = FetchRequest<ManagedObject>(entityName: template.entity?.name ?? template.entityName ?? "")
        // `$FETCH_SOURCE.key` reads the object's value (its unsaved value when it has one).
        request.predicate = try template.predicate?.withSubstitutionVariables(
            ["FETCH_SOURCE": object, "FETCHED_PROPERTY": property.name],
            resolvingKeyPaths: { variable, keys in
                guard variable == "FETCH_SOURCE" else { return .none }
                var current = object
                for key in keys.dropLast() {
                    guard let next = try current.checkedValue(forKey: key) as? ManagedObject else { return .some(nil) }
                    current = next
                }
                return .some(try current.checkedValue(forKey: keys.last ?? ""))
            })
        request.sortDescriptors = template.sortDescriptors
        request.fetchLimit = template.fetchLimit
        request.includesSubentities = template.includesSubentities
        let result: [ManagedObject]
        do {
            result = try fetch(request)
        } catch var error as StrataError {
            error.message += " — reading the fetched property \(object.entity.name).\(property.name)"
            throw error
        }
        fetchedPropertyValues[object.objectID, default: [:]][property.name] = result
        return result
    }
}
