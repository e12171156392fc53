// FuzzRegressionTests: each input the fuzz targets (Fuzz/, Scripts/fuzz.sh) found breaking their
// contract, kept as a regression test: reading it is a StrataError or a result, never a trap or an
// allocation sized from a number the file claims.

import Foundation
import Strata
import XCTest
import _StrataTestSupport

final class FuzzRegressionTests: XCTestCase {
    private func fixture(_ name: String) throws -> String {
        let folder = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/fuzz", withExtension: nil))
        // Copied: a reader may leave nothing beside the file, but the fixture stays untouched either way.
        let copy = TestDirectory.url.appendingPathComponent("\(UUID().uuidString.prefix(8))-\(name)").path
        try FileManager.default.copyItem(atPath: folder.appendingPathComponent(name).path, toPath: copy)
        return copy
    }

    /// A cell whose payload size claims 30 GB in a file whose header claims as many pages: the
    /// reader reserved the claimed size before reading the overflow chain (AddressSanitizer: out
    /// of memory). The payload is now bounded by the pages the files hold.
    func testAPayloadSizeIsBoundedByThePagesTheFilesHold() throws {
        let path = try fixture("sqlite-huge-overflow-claim.sqlite")
        let database = try SQLiteDatabase(path: path)
        var messages: [String] = []
        for entry in database.schema where entry.type == "table" && entry.rootPage > 0 {
            do {
                try database.forEachRow(inTable: entry.name) { _, _ in true }
            } catch let error as StrataError {
                messages.append(error.message)
            }
        }
        XCTAssertTrue(messages.contains { $0.contains(path) && $0.contains("more than the database holds") }, "\(messages)")
    }

    /// A leaf holding a row outside the key range its parent page gives it: the scan found row 41,
    /// the lookup by rowid (which descends by the parent's keys) did not. The scan now checks every
    /// key against its parents' range, so what it returns, a lookup finds.
    func testARowOutsideItsParentsKeyRangeIsAnError() throws {
        let path = try fixture("sqlite-row-outside-parent-range.sqlite")
        let database = try SQLiteDatabase(path: path)
        for entry in database.schema where entry.type == "table" && entry.rootPage > 0 {
            var rowids: [Int64] = []
            do {
                try database.forEachRow(inTable: entry.name) { rowid, _ in rowids.append(rowid); return true }
            } catch let error as StrataError {
                XCTAssertTrue(error.message.contains(path), error.message)
                continue
            }
            for rowid in rowids { XCTAssertNotNil(try database.row(rowid, inTable: entry.name), "\(entry.name): row \(rowid) scanned but not found") }
        }
    }

    /// A processing instruction without data (`<?xmlnvers?>`) after a damaged XML declaration:
    /// FoundationXML's parser crashed on it (strlen of a null pointer) where the earlier check,
    /// which skipped over the damaged declaration's "data", never looked. Every `<?` is looked at now.
    func testAnInstructionWithoutDataIsRefusedBeforeFoundationXMLSeesIt() throws {
        let model = try fixture("xcode-model-instruction-without-data.xml")
        XCTAssertThrowsError(try ManagedObjectModel(contentsOf: URL(fileURLWithPath: model))) { error in
            XCTAssertTrue("\(error)".contains("processing instruction"), "\(error)")
        }
        let store = try fixture("xml-store-instruction-without-data.xml")
        XCTAssertThrowsError(try ManagedObjectModel.modelOfXMLStore(at: URL(fileURLWithPath: store))) { error in
            XCTAssertTrue("\(error)".contains("processing instruction"), "\(error)")
        }
        XCTAssertEqual(XMLProcessingInstructions.firstWithoutData(in: Array("<?xml version=\"1.0\"?><a><?b?></a>".utf8))?.offset, 24)
        XCTAssertNil(XMLProcessingInstructions.firstWithoutData(in: Array("<?xml version=\"1.0\"?><a>x</a>".utf8)))
    }
}
