// UndoManager: undo and redo stacks of grouped actions, for platforms whose Foundation has none.
//
// Owns: the undo/redo stacks, grouping (explicit begin/end, or one group per event when
// `groupsByEvent`), and the undoing/redoing state that routes registrations made during an undo to
// the redo stack. Contexts register an inverse action for every change. On Apple platforms
// Foundation's UndoManager exists and this type is not declared. Never runs actions by itself.

#if !canImport(Darwin)
import Foundation

/// Records inverse actions so changes can be undone and redone (Foundation's API, for Linux).
///
/// ```swift
/// context.undoManager = UndoManager()
/// quake.magnitude = 5
/// context.undoManager?.undo()      // magnitude is back to its previous value
/// ```
public final class UndoManager {
    private typealias Action = () -> Void
    private var undoStack: [[Action]] = []
    private var redoStack: [[Action]] = []
    /// Explicit groups being built (innermost last).
    private var openGroups: [[Action]] = []
    /// The group collecting registrations of the current event when `groupsByEvent`.
    private var eventGroup: [Action]?
    private var state: State = .collecting

    private enum State {
        /// Registrations go to the undo stack (and clear the redo stack).
        case collecting
        /// An undo is running: registrations form the redo group.
        case undoing
        /// A redo is running: registrations form the undo group, without clearing redo.
        case redoing
    }

    /// Whether registrations outside an explicit group are grouped per event (default true): the
    /// context closes the event group when it processes pending changes.
    public var groupsByEvent = true
    /// The most groups kept (0: unlimited).
    public var levelsOfUndo = 0
    /// Whether undo registrations are being recorded.
    public private(set) var isUndoRegistrationEnabled = true
    private var disableCount = 0
    private var runningGroup: [Action] = []

    public init() {}

    public var canUndo: Bool { !undoStack.isEmpty || !(eventGroup?.isEmpty ?? true) }
    public var canRedo: Bool { !redoStack.isEmpty }
    public var isUndoing: Bool { state == .undoing }
    public var isRedoing: Bool { state == .redoing }
    /// How deep the explicit grouping is.
    public var groupingLevel: Int { openGroups.count }

    /// Records `handler` to run on `target` when the current group is undone.
    public func registerUndo<Target: AnyObject>(withTarget target: Target, handler: @escaping (Target) -> Void) {
        guard isUndoRegistrationEnabled else { return }
        let action: Action = { [weak target] in if let target { handler(target) } }
        switch state {
        case .undoing, .redoing:
            runningGroup.append(action)
        case .collecting:
            redoStack.removeAll()
            if openGroups.isEmpty {
                if groupsByEvent { eventGroup = (eventGroup ?? []) + [action] } else { push([action]) }
            } else {
                openGroups[openGroups.count - 1].append(action)
            }
        }
    }

    /// Starts a group: everything registered until the matching ``endUndoGrouping()`` undoes together.
    public func beginUndoGrouping() {
        closeEventGroup()
        openGroups.append([])
    }

    /// Ends the innermost group.
    public func endUndoGrouping() {
        guard let group = openGroups.popLast() else { return }
        if openGroups.isEmpty {
            if !group.isEmpty { push(group) }
        } else {
            openGroups[openGroups.count - 1].append(contentsOf: group)
        }
    }

    /// Closes the implicit group of the current event (contexts call this from
    /// `processPendingChanges()`).
    public func closeEventGroup() {
        if let group = eventGroup, !group.isEmpty { push(group) }
        eventGroup = nil
    }

    private func push(_ group: [Action]) {
        undoStack.append(group)
        if levelsOfUndo > 0 && undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
    }

    /// Undoes the most recent group; its inverse becomes redoable.
    public func undo() {
        closeEventGroup()
        while !openGroups.isEmpty { endUndoGrouping() }
        guard let group = undoStack.popLast() else { return }
        run(group, as: .undoing) { redoStack.append($0) }
    }

    /// Redoes the most recently undone group.
    public func redo() {
        guard let group = redoStack.popLast() else { return }
        run(group, as: .redoing) { push($0) }
    }

    private func run(_ group: [Action], as mode: State, store: ([Action]) -> Void) {
        state = mode
        runningGroup = []
        for action in group.reversed() { action() }
        state = .collecting
        if !runningGroup.isEmpty { store(runningGroup) }
        runningGroup = []
    }

    /// Forgets every undo and redo action.
    public func removeAllActions() {
        undoStack.removeAll()
        redoStack.removeAll()
        openGroups.removeAll()
        eventGroup = nil
    }

    /// Stops recording registrations (nestable).
    public func disableUndoRegistration() {
        disableCount += 1
        isUndoRegistrationEnabled = false
    }

    /// Resumes recording registrations.
    public func enableUndoRegistration() {
        disableCount = max(0, disableCount - 1)
        isUndoRegistrationEnabled = disableCount == 0
    }
}
#else
import Foundation
extension UndoManager {
    /// Foundation groups by run-loop event on Apple platforms; nothing to close here.
    func closeEventGroup() {}
}
#endif
