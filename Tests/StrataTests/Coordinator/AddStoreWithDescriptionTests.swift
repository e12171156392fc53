// AddStoreWithDescriptionTests: Core Data's `addPersistentStore(with:completionHandler:)` on the
// coordinator: a description's type, place and options are honoured, the callback comes before
// the call returns (or, with shouldAddStoreAsynchronously, from another thread, after it), and a
// description without a URL is an error in the callback.

import Foundation
import Strata
@_spi(StrataInternal) import StrataCore
import XCTest
import _StrataTestSupport

final class AddStoreWithDescriptionTests: XCTestCase {
    func testADescribedStoreIsAddedNowOrInTheBackground() throws {
        for asynchronous in [false, true] {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
            let url = TestStores.freshFile()
            let description = PersistentStoreDescription(url: url)
            description.isReadOnly = false
            description.setOption(true as NSNumber, forKey: PersistentHistoryTrackingKey)
            description.shouldAddStoreAsynchronously = asynchronous
            let done = expectation(description: "added")
            let called = Lock<(count: Int, onCaller: Bool?)>((0, nil))
            let caller = Thread.current
            coordinator.addPersistentStore(with: description) { added, error in
                XCTAssertNil(error)
                XCTAssertTrue(added === description)
                called.withLock { $0 = ($0.count + 1, Thread.current == caller) }
                done.fulfill()
            }
            if !asynchronous { XCTAssertEqual(called.withLock { $0.count }, 1, "the callback came before the call returned") }
            wait(for: [done], timeout: 10)
            XCTAssertEqual(called.withLock { $0.onCaller }, !asynchronous)
            let store = try XCTUnwrap(coordinator.persistentStores.first)
            XCTAssertEqual(store.type, .native)
            XCTAssertEqual(store.url?.standardizedFileURL, url.standardizedFileURL)
            XCTAssertNotNil(coordinator.currentPersistentHistoryToken(fromStores: nil), "the description's options reached the store")
        }
    }

    func testADescriptionWithoutAURLIsAnErrorInTheCallback() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TestModels.earthquakes())
        let description = PersistentStoreDescription()
        var reported: (any Error)?
        coordinator.addPersistentStore(with: description) { _, error in reported = error }
        XCTAssertTrue("\(String(describing: reported))".contains("no URL"), "\(String(describing: reported))")
        XCTAssertTrue(coordinator.persistentStores.isEmpty)
    }
}
