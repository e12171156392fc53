// Unretained: a reference that does not retain its object, the one spelling of Strata's unretained
// borrows (issue 54: they were `Unmanaged` + `_withUnsafeGuaranteedRef` in some places and
// `unowned(unsafe)` in others, each justified by a comment about another file).
//
// Owns: the borrow, and its checked mode. Built with `-DSTRATA_CHECKS` (`.ci/run`'s checked step,
// or `swift test -Xswiftc -DSTRATA_CHECKS --scratch-path .build-checks`), an Unretained also keeps
// a weak reference and every access traps, naming the type, if the object is gone: a lifetime
// claim that was wrong becomes a test failure instead of a use after free. Never retains its
// object in the normal build (that is its reason to exist: retain and release traffic showed in
// profiles where these fields are read, once per object of a fetch or page of a lookup), and is
// never used without a comment at the field naming who keeps the object alive.
//
// The budget is stated in README ("Unsafe speed"). A new field needs a profile showing the
// retain it saves, and its lifetime comment.

@_spi(StrataInternal)
@frozen
public struct Unretained<Object: AnyObject>: @unchecked Sendable {
    // @unchecked Sendable: an Unretained is as sendable as the object's owner makes it; every
    // field holding one sits in a type whose own Sendable conformance states the rule.
    @usableFromInline let reference: Unmanaged<Object>
    #if STRATA_CHECKS
    @usableFromInline weak var alive: Object?
    #endif

    @inlinable
    public init(_ object: Object) {
        reference = Unmanaged.passUnretained(object)
        #if STRATA_CHECKS
        alive = object
        #endif
    }

    /// From an unmanaged reference (a pointer published through an atomic, say).
    @inlinable
    public init(_ reference: Unmanaged<Object>) {
        self.reference = reference
        #if STRATA_CHECKS
        alive = reference.takeUnretainedValue()
        #endif
    }

    /// The pointer, for publishing through an atomic (`init(_: Unmanaged)` takes it back).
    @inlinable
    public var opaque: UnsafeMutableRawPointer { reference.toOpaque() }

    /// Calls `body` with the object, borrowed (neither retained nor released).
    @inlinable @inline(__always)
    public func withObject<R>(_ body: (Object) throws -> R) rethrows -> R {
        #if STRATA_CHECKS
        precondition(alive != nil, "Strata (STRATA_CHECKS): an Unretained<\(Object.self)> outlived its object")
        #endif
        return try reference._withUnsafeGuaranteedRef(body)
    }

    /// The object, retained by the caller from here on.
    @inlinable
    public var object: Object { withObject { $0 } }

    /// Whether this refers to `other` (compares identities, retains nothing).
    @inlinable
    public func refers(to other: Object) -> Bool {
        reference.toOpaque() == Unmanaged.passUnretained(other).toOpaque()
    }

    /// Whether two references name the same object.
    @inlinable
    public static func === (lhs: Unretained, rhs: Unretained) -> Bool {
        lhs.reference.toOpaque() == rhs.reference.toOpaque()
    }
}
