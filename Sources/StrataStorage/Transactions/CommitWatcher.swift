// CommitWatcher: tells observers that the store's latest committed generation advanced, by a
// commit of this engine or of another process sharing the file (`StorageEngine.observeCommits`).
//
// Owns: one engine's observations, the one thread that calls their handlers, and its life: it
// starts with the first live observation and stops when the last one is cancelled or released,
// or when the engine closes. The thread sleeps in a FileChangeMonitor on the shared file (no CPU
// while idle; FORMAT.md §14.1), which every commit's header write changes (this engine's own
// commits also `poke()` it where the file is not watched). On waking it consumes every pending
// wake-up first, then reads the latest generation, so a commit landing during a round always
// causes another round.
// Must never call a handler with a lock held (its own or the engine's), never release a handler
// under its lock (a captured object's deinit may cancel), never keep the engine alive (it
// holds it weakly) and never wait for its thread (a handler may cancel or close from inside).

import Foundation
import Synchronization
@_spi(StrataInternal) import StrataCore

/// A registration made by `StorageEngine.observeCommits`; calls stop after `cancel()` or when it is released.
///
/// No call begins after `cancel()` returns; a call already under way on the watcher's thread
/// may still be finishing (unless `cancel()` is called from inside it).
public final class CommitObservation: Sendable {
    private let watcher: CommitWatcher?
    private let id: Int?

    init(watcher: CommitWatcher?, id: Int?) {
        self.watcher = watcher
        self.id = id
    }

    /// Stops the calls. Safe to call more than once, from any thread, and from inside the handler.
    public func cancel() {
        if let id { watcher?.remove(id) }
    }

    deinit { cancel() }
}

extension StorageEngine {
    /// Calls `handler` on a background thread whenever the store's latest committed generation advanced
    /// past the one last passed to this handler (starting from the latest at registration): commits of this
    /// engine and of other processes sharing the file. Calls to one handler never overlap; several commits
    /// may coalesce into one call, but the latest generation is always delivered eventually.
    ///
    /// The handler is called with no lock of the engine held: it may read, write, cancel its
    /// observation or close the engine. Other processes' commits are noticed through the shared
    /// file (inotify on Linux, a dispatch source on Apple platforms); with a file system other than
    /// ``PosixFileSystem`` only this engine's own commits are. Observing a closed engine returns an
    /// observation that is never called. A handler that captures the engine keeps it alive until
    /// the observation is cancelled or released, or the engine is closed.
    public func observeCommits(_ handler: @escaping @Sendable (Generation) -> Void) -> CommitObservation {
        let watcher = commitWatcher.load() ?? commitWatcher.storeIfNil(CommitWatcher(engine: self))
        let baseline = (try? latestGeneration) ?? view.withLock { $0.meta.generation }
        let id = watcher.add(handler, delivered: baseline, engineClosed: { view.withLock { $0.lifecycle.isClosed } })
        return CommitObservation(watcher: watcher, id: id)
    }
}

/// One engine's observations and the thread delivering to them (see the file comment).
final class CommitWatcher: Sendable {
    private struct Observer {
        let handler: @Sendable (Generation) -> Void
        /// The generation last passed to the handler (or the latest at registration).
        var delivered: Generation
    }

    private struct Run {
        let id: Int
        let monitor: FileChangeMonitor
    }

    private struct State {
        var observers: [Int: Observer] = [:]
        var nextObserver = 0
        /// The thread that should be delivering; nil while none should. A thread whose run is no
        /// longer current stops at its next check.
        var run: Run?
        var runs = 0
        /// Threads that have not yet left their loop (for tests).
        var liveThreads = 0
        var closed = false
    }

    private let state = Lock(State())
    private let engine = EngineReference()
    /// The shared file to watch; nil when the engine's file system is not the operating system's.
    private let watchedPath: String?

    init(engine: StorageEngine) {
        self.engine.set(engine)
        if engine.options.fileSystem is PosixFileSystem {
            let path = StorageEngine.sharedPath(engine.path)
            watchedPath = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        } else {
            watchedPath = nil
        }
    }

    /// Registers `handler`, starting the thread if none runs. Nil if the engine is closed.
    func add(_ handler: @escaping @Sendable (Generation) -> Void, delivered: Generation, engineClosed: () -> Bool) -> Int? {
        let added = state.withLock { s -> (id: Int, start: Run?)? in
            if s.closed || engineClosed() {
                s.closed = true
                return nil
            }
            let id = s.nextObserver
            s.nextObserver += 1
            s.observers[id] = Observer(handler: handler, delivered: delivered)
            if s.run != nil { return (id, nil) }
            s.runs += 1
            let run = Run(id: s.runs, monitor: FileChangeMonitor(watching: watchedPath))
            s.run = run
            s.liveThreads += 1
            return (id, run)
        }
        guard let added else { return nil }
        if let run = added.start {
            let thread = Thread { [self] in loop(run) }
            thread.name = "Strata commit watcher"
            thread.start()
        }
        // A commit between reading `delivered` and registering gets its round (its file event
        // may have been consumed before this observer was there).
        state.withLock { $0.run?.monitor }?.wake()
        return added.id
    }

    /// Removes an observation; the last one stops the thread.
    func remove(_ id: Int) {
        let (removed, monitor) = state.withLock { s -> (Observer?, FileChangeMonitor?) in
            let removed = s.observers.removeValue(forKey: id)
            guard removed != nil, s.observers.isEmpty, let run = s.run else { return (removed, nil) }
            s.run = nil
            return (removed, run.monitor)
        }
        monitor?.wake()
        withExtendedLifetime(removed) {}   // the handler is released here, outside the lock
    }

    /// Wakes the thread, if one runs: this engine just published a commit. When the thread
    /// watches the shared file, the commit's header write has woken it already (inotify reports
    /// this process's writes too), and nothing more is done.
    func poke() {
        guard let monitor = state.withLock({ $0.run?.monitor }), !monitor.seesOwnWrites else { return }
        monitor.wake()
    }

    /// The engine is closing: no call begins from now on, and the thread stops.
    func engineClosed() {
        let (observers, monitor) = state.withLock { s -> ([Int: Observer], FileChangeMonitor?) in
            s.closed = true
            defer { s.observers = [:]; s.run = nil }
            return (s.observers, s.run?.monitor)
        }
        monitor?.wake()
        withExtendedLifetime(observers) {}   // handlers are released here, outside the lock
    }

    /// Threads that have not yet stopped (for tests).
    var liveThreads: Int { state.withLock { $0.liveThreads } }

    // MARK: The thread

    private func loop(_ run: Run) {
        defer { state.withLock { $0.liveThreads -= 1 } }
        var retry: Double?
        while true {
            run.monitor.wait(timeout: retry)
            guard isCurrent(run) else { return }
            retry = deliver(run) ? nil : min((retry ?? 0.025) * 2, 1)
            // Commits in quick succession share a round: the next wait starts `roundGap` after
            // this round, so a burst of thousands of commits a second costs a round per gap,
            // not a wake-up of this thread (and of the committing thread's kernel) per commit.
            // A commit after a quiet spell is delivered at once.
            if retry == nil { usleep(Self.roundGap) }
        }
    }

    /// The least time between two rounds, in microseconds. Measured with strata-bench sync's
    /// "one-object saves" (remote change notifications on, 2 cores): at 1 ms the thread woke about
    /// 1,000 times a second during a burst of saves, and the saving thread ran 8–10% slower beside
    /// it; at 5 ms (at most 200 rounds a second) the difference is within noise. A commit after a
    /// quiet spell is still delivered at once; one in a burst waits at most this long.
    static let roundGap: UInt32 = 5_000

    private func isCurrent(_ run: Run) -> Bool {
        state.withLock { $0.run?.id == run.id }
    }

    /// One round: reads the latest generation and calls every handler that has not seen it.
    /// False if the generation could not be read (tried again after a pause).
    private func deliver(_ run: Run) -> Bool {
        guard let latest = latestGeneration() else { return false }
        let due = state.withLock { s -> [(id: Int, handler: @Sendable (Generation) -> Void)] in
            var due: [(id: Int, handler: @Sendable (Generation) -> Void)] = []
            for (id, observer) in s.observers where observer.delivered < latest {
                s.observers[id]!.delivered = latest
                due.append((id, observer.handler))
            }
            return due.sorted { $0.id < $1.id }
        }
        for (id, handler) in due {
            // A handler called before may have cancelled this one or closed the engine.
            guard state.withLock({ $0.run?.id == run.id && $0.observers[id] != nil }) else { continue }
            handler(latest)
        }
        return true
    }

    /// The engine's latest generation (catching up with other processes), or nil if the engine
    /// is gone, closed or failed to read it. The engine is released before any handler runs.
    private func latestGeneration() -> Generation? {
        guard let engine = engine.engine else { return nil }
        if engine.view.withLock({ $0.lifecycle.isClosed }) { return nil }
        return try? engine.latestGeneration
    }
}
