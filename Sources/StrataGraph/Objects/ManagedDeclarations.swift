// ManagedDeclarations: what the `@Managed` properties of a class declare (each one's initial
// value and inverse), read once per class and kept per class, not per object.
//
// Owns: the recorder that `Managed`'s initializers report to while a prototype of a class is
// made, and the per-class table built from it (property name → initial value, inverse). Why it
// exists: the wrapper stores one byte, so every object of a class with five `@Managed` properties
// is ~88 bytes smaller (issue 30: a fetch of 100,000 objects holds 100,000 of them), while what
// the wrappers declare is the same for every object of the class. Never touches objects in
// contexts; never records outside `declarations(of:)`.
//
// How the recording lines up with the properties: making an object runs the initial-value
// expressions of its class's stored properties in declaration order, then its superclass's, and
// so on up; `Mirror` lists each class's stored properties in declaration order. So the recorded
// declarations, in order, are the `@Managed` children of the class's mirror, then of its
// superclass's mirror, and so on (the counts must agree, or the class is refused).

import Foundation
import Synchronization
@_spi(StrataInternal) import StrataCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What one `@Managed` property declares besides its type: its initial value (the entity's
/// default, and what a read of nil gives a non-optional property) and the inverse it names.
struct ManagedPropertyDeclaration {
    let initialValue: Any
    let inverse: AnyKeyPath?
}

enum ManagedDeclarations {
    /// The declarations of a class's `@Managed` properties by property name, or why they cannot
    /// be read.
    typealias Table = Result<[String: ManagedPropertyDeclaration], StrataError>

    /// How many threads are recording: what every wrapper initializer reads first (almost always 0).
    private static let recordingThreads = Atomic<Int>(0)
    /// What each recording thread has recorded so far, by thread.
    private static let recordings = Lock<[UInt: [ManagedPropertyDeclaration]]>([:]) // guards the recordings
    /// The tables made so far, by class.
    private static let tables = Lock<[ObjectIdentifier: Table]>([:]) // guards the tables

    /// Called by `Managed`'s initializers: records the declaration while this thread makes a
    /// prototype in `declarations(of:)`, and does nothing otherwise.
    @inline(__always)
    static func wrapperMade(initialValue: @autoclosure () -> Any, inverse: AnyKeyPath?) {
        guard recordingThreads.load(ordering: .acquiring) > 0 else { return }
        let thread = currentThread()
        let value = initialValue()
        recordings.withLock { recordings in
            recordings[thread]?.append(ManagedPropertyDeclaration(initialValue: value, inverse: inverse))
        }
    }

    /// The declarations of `cls`'s `@Managed` properties (its superclasses' included), by name.
    static func declarations(of cls: ManagedObject.Type) -> Table {
        let key = ObjectIdentifier(cls)
        if let table = tables.withLock({ $0[key] }) { return table }
        let table = recordDeclarations(of: cls)
        tables.withLock { $0[key] = table }
        return table
    }

    /// The declaration of `cls`'s property `name` (nil when it has no `@Managed` property so named
    /// or its declarations cannot be read).
    static func declaration(of cls: ManagedObject.Type, named name: String) -> ManagedPropertyDeclaration? {
        guard case .success(let table) = declarations(of: cls) else { return nil }
        return table[name]
    }

    /// Makes a prototype of `cls` while recording, and lines the recording up with its mirror
    /// (uncached: `declarations(of:)` keeps what this returns).
    static func recordDeclarations(of cls: ManagedObject.Type) -> Table {
        let thread = currentThread()
        recordings.withLock { $0[thread] = [] }
        recordingThreads.add(1, ordering: .releasing)
        let prototype = cls.init(entity: EntityDescription(), insertInto: nil)
        prototype.state = .prototype
        recordingThreads.subtract(1, ordering: .releasing)
        let recorded = recordings.withLock { $0.removeValue(forKey: thread) } ?? []
        var names: [String] = []
        var mirror: Mirror? = Mirror(reflecting: prototype)
        while let current = mirror {
            for child in current.children {
                guard let label = child.label, child.value is any AnyManagedProperty else { continue }
                names.append(label.hasPrefix("_") ? String(label.dropFirst()) : label)
            }
            mirror = current.superclassMirror
        }
        guard names.count == recorded.count else {
            return .failure(StrataError(.invalidModel, "class \(cls): its \(names.count) @Managed properties made \(recorded.count) wrappers (an initializer that assigns a wrapper itself is not supported)"))
        }
        return .success(Dictionary(zip(names, recorded), uniquingKeysWith: { first, _ in first }))
    }

    private static func currentThread() -> UInt {
        #if canImport(Darwin)
        return UInt(bitPattern: pthread_self())
        #else
        return UInt(pthread_self())
        #endif
    }
}
