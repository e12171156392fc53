// StorageEngine+LatestPin: the engine's hold of the pin of the latest generation that read
// transactions share (SharedPin.swift says why and for how long).
//
// Owns: taking a use of the held pin for `beginRead`, installing a new one, and giving the hold
// back after this engine's commits, when reads stop for a short while, and at close. Must never
// hand out a use of a pin it no longer holds, nor hold a pin older than one it held before.

import Dispatch
@_spi(StrataInternal) import StrataCore

extension StorageEngine {
    /// The held pin, the read transactions that began on a pin since the idle check last
    /// looked, and whether that check is scheduled.
    struct LatestPin {
        var pin: SharedPin?
        var uses: UInt64 = 0
        var checkScheduled = false
    }

    /// A read transaction using the held pin, when it pins `generation` and was not evicted.
    func sharedRead(at generation: Generation) -> ReadTransaction? {
        let pin = latestPin.withLock { s -> SharedPin? in
            guard let pin = s.pin, pin.generation == generation, !pin.isEvicted else { return nil }
            pin.take()
            s.uses &+= 1
            return pin
        }
        return pin.map { ReadTransaction(engine: self, sharing: $0) }
    }

    /// A read transaction on the reader just registered as `token` at `meta`, whose pin becomes
    /// the held one (unless a newer generation's is held already).
    func startSharing(meta: StoreMeta, token: ReaderToken) -> ReadTransaction {
        let pin = SharedPin(meta: meta, snapshot: Snapshot(pager: pager, readers: readers, generation: meta.generation, token: token))
        pin.take()
        let (released, scheduleCheck) = latestPin.withLock { s -> (SharedPin?, Bool) in
            if let held = s.pin, held.generation > meta.generation { return (pin, false) }
            let previous = s.pin
            s.pin = pin
            s.uses &+= 1
            defer { s.checkScheduled = true }
            return (previous, !s.checkScheduled)
        }
        released?.giveBack()
        if scheduleCheck { scheduleIdleCheck() }
        return ReadTransaction(engine: self, sharing: pin)
    }

    /// Gives back the engine's hold of the shared pin (after a commit of this engine, at close).
    func dropLatestPin() {
        let dropped = latestPin.withLock { s -> SharedPin? in
            defer { s.pin = nil }
            return s.pin
        }
        dropped?.giveBack()
    }

    /// How long the engine holds a pin no read took a use of: long enough to join the reads of
    /// a burst (a fetch loop begins one every few microseconds), short against the reader
    /// slot's linger, which starts when the pin goes (50 ms of the default 250).
    var latestPinIdleDelay: Double { options.readerSlotLinger / 5 }

    private func scheduleIdleCheck() {
        let seen = latestPin.withLock { $0.uses }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + latestPinIdleDelay) { [weak self] in
            self?.dropIdleLatestPin(unlessUsedSince: seen)
        }
    }

    /// Gives back the hold when no read took a use since `seen`; else looks again later.
    private func dropIdleLatestPin(unlessUsedSince seen: UInt64) {
        let (dropped, again) = latestPin.withLock { s -> (SharedPin?, Bool) in
            if s.uses != seen && s.pin != nil { return (nil, true) }
            s.checkScheduled = false
            defer { s.pin = nil }
            return (s.pin, false)
        }
        dropped?.giveBack()
        if again { scheduleIdleCheck() }
    }
}
