// SectionedFetchResults: the results of a fetch request grouped in sections by a key path, as an
// observable random-access collection of sections that stays current (what SwiftUI's
// @SectionedFetchRequest gives, without SwiftUI), with sort, predicate and section key path
// settable at run time.
//
// Owns: the sections built from its source's objects (runs of equal section identifiers, in
// result order) and the Observation registrar; the controller and the configuration are its
// ResultsSource's. Used on its context's queue. Never changes objects.

import Foundation
import Observation

/// The objects of a fetch request in sections by `sectionIdentifier`, kept current as the
/// context changes. Sort the request by the section key first: sections are runs of objects with
/// equal identifiers, in result order.
///
/// ```swift
/// let request = Quake.fetchRequest()
/// request.sortDescriptors = [SortDescriptor(\Quake.place), SortDescriptor(\Quake.time, order: .reverse)]
/// let byPlace = try SectionedFetchResults(fetchRequest: request, sectionIdentifier: \Quake.place, managedObjectContext: viewContext)
/// for section in byPlace { print(section.id, section.count) }
/// ```
public final class SectionedFetchResults<SectionIdentifier: Hashable, Result: ManagedObject>: RandomAccessCollection, Observable {
    /// One section: its identifier and its objects.
    public struct Section: Identifiable, RandomAccessCollection {
        public let id: SectionIdentifier
        public let elements: [Result]
        public var startIndex: Int { 0 }
        public var endIndex: Int { elements.count }
        public subscript(position: Int) -> Result { elements[position] }
    }

    private var source: ResultsSource<Result>!
    private let registrar = ObservationRegistrar()
    private var storage: [Section] = []
    private var identifierStorage: KeyPath<Result, SectionIdentifier>
    private var errorStorage: (any Error)?

    public init(fetchRequest: FetchRequest<Result>, sectionIdentifier: KeyPath<Result, SectionIdentifier>,
                managedObjectContext context: ManagedObjectContext) throws {
        identifierStorage = sectionIdentifier
        source = try ResultsSource(fetchRequest, context: context) { [weak self] in self?.reload() }
        storage = Self.sections(of: source.objects, by: sectionIdentifier)
    }

    private static func sections(of objects: [Result], by keyPath: KeyPath<Result, SectionIdentifier>) -> [Section] {
        var sections: [Section] = []
        var current: (id: SectionIdentifier, members: [Result])?
        for object in objects {
            let id = object[keyPath: keyPath]
            if current?.id == id {
                current!.members.append(object)
            } else {
                if let done = current { sections.append(Section(id: done.id, elements: done.members)) }
                current = (id, [object])
            }
        }
        if let done = current { sections.append(Section(id: done.id, elements: done.members)) }
        return sections
    }

    private func reload() {
        registrar.withMutation(of: self, keyPath: \.sections) {
            storage = Self.sections(of: source.objects, by: identifierStorage)
        }
    }

    /// The current sections, in order.
    public var sections: [Section] {
        registrar.access(self, keyPath: \.sections)
        return storage
    }

    /// Why the last configuration change could not fetch (nil after one that did).
    public var fetchError: (any Error)? {
        registrar.access(self, keyPath: \.fetchError)
        return errorStorage
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { sections.count }
    public subscript(position: Int) -> Section { sections[position] }

    // MARK: Configuration

    /// What the sections are made by; setting it regroups the results.
    public var sectionIdentifier: KeyPath<Result, SectionIdentifier> {
        get { identifierStorage }
        set {
            identifierStorage = newValue
            reload()
        }
    }

    public var sortDescriptors: [SortDescriptor<Result>] {
        get { source.sortDescriptors }
        set { configured(source.reconfigure { $0.sortDescriptors = newValue }) }
    }

    public var nsSortDescriptors: [FetchSortDescriptor] {
        get { source.nsSortDescriptors }
        set { configured(source.reconfigure { $0.sortDescriptors = newValue }) }
    }

    public var nsPredicate: FetchPredicate? {
        get { source.nsPredicate }
        set { configured(source.setNSPredicate(newValue)) }
    }

    public var predicate: Predicate<Result>? {
        get { source.predicate }
        set { configured(source.setPredicate(newValue)) }
    }

    private func configured(_ error: (any Error)?) {
        registrar.withMutation(of: self, keyPath: \.fetchError) { errorStorage = error }
        if error == nil { reload() }
    }
}
