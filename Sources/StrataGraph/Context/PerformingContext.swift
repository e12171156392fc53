// PerformingContext: which context's perform block the current thread is running, so that
// Core Data's `FetchRequest.execute()` (no context argument) finds the context to fetch in.
//
// Owns: a per-thread stack of contexts, pushed and popped around every perform and
// performAndWait block. Never keeps a context alive (the entries are unowned and live only while
// the block, which holds the context, runs) and never crosses threads.

import Foundation
@_spi(StrataInternal) import StrataCore

enum PerformingContext {
    /// The stack of the current thread (perform blocks may nest, on one context or several).
    private final class Stack {
        /// Unretained: a context is on the stack only while its perform block runs, which holds it.
        var contexts: [Unretained<ManagedObjectContext>] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // The stack is released with its thread.
        pthread_key_create(&key) { pointer in
            #if canImport(Glibc)
            guard let pointer else { return }
            #endif
            Unmanaged<AnyObject>.fromOpaque(pointer).release()
        }
        return key
    }()

    private static var stack: Stack {
        if let pointer = pthread_getspecific(key) { return Unmanaged<Stack>.fromOpaque(pointer).takeUnretainedValue() }
        let stack = Stack()
        pthread_setspecific(key, Unmanaged.passRetained(stack).toOpaque())
        return stack
    }

    /// Runs `body` with `context` as the current thread's performing context.
    static func run<T, E: Error>(_ context: ManagedObjectContext, _ body: () throws(E) -> T) throws(E) -> T {
        let stack = self.stack
        stack.contexts.append(Unretained(context))
        defer { stack.contexts.removeLast() }
        return try body()
    }

    /// The context whose perform block the current thread is running (the innermost one).
    static var current: ManagedObjectContext? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<Stack>.fromOpaque(pointer).takeUnretainedValue().contexts.last?.object
    }
}
