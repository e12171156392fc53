// Lock: a mutual-exclusion lock around a value, on pthread mutexes.
//
// Owns: the product's only locking primitive (engine and object layer). It exists instead of
// Synchronization.Mutex because ThreadSanitizer on Linux does not see Mutex's futex-based
// synchronization and reports false races (verified with Swift 6.3.1 on a three-line program),
// which would make the sanitizer runs of the concurrency tests useless; it sees pthread mutexes. Must never be copied (it is
// ~Copyable) and never be held while calling into user code.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value that is only reachable while holding its lock.
///
/// `@unchecked Sendable`: `value` is read and written only inside `withLock`, between
/// `pthread_mutex_lock` and `pthread_mutex_unlock` on `mutex`.
@_spi(StrataInternal) public struct Lock<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    // @usableFromInline with @inlinable below: every module that locks inlines the lock (a call
    // into StrataCore per lock, unspecialized for the closure, cost 2% of a point lookup's
    // instructions). `package` bodies are not inlined across modules; SPI-public ones are.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>

    public init(_ initial: consuming Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        value = .allocate(capacity: 1)
        value.initialize(to: initial)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable @inline(__always)
    public borrowing func withLock<Result: ~Copyable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}
