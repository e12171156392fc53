// SQLitePages: the pages of a SQLite database as its last committed transaction left them: a
// page's newest committed frame in the `-wal` log if it has one, else the database file.
//
// Owns: the database header, the log's index, the page count, and a small cache of pages read
// (bounded by `cacheLimit`, not by the file's size). Never hands out a page outside 1...pageCount
// and never returns fewer bytes than a page: a short read is a `corrupt` error naming the page.

import Foundation
@_spi(StrataInternal) import StrataCore

final class SQLitePages: Sendable {
    let path: String
    let header: SQLiteDatabaseHeader
    let wal: SQLiteWALIndex
    /// Pages in the database (after the log's last commit).
    let pageCount: UInt32
    /// How many pages the files can actually hold (the store file's, plus the log's frames): a
    /// header may claim more, and nothing sized from a claim may exceed what exists.
    let storedPages: Int
    private let file: SQLiteFileReader
    private let log: SQLiteFileReader?
    private let cache = Lock([UInt32: [UInt8]]()) // guards the cached pages
    static let cacheLimit = 512

    var pageSize: Int { header.pageSize }
    var usableSize: Int { header.usableSize }

    init(path: String) throws {
        guard let file = try SQLiteFileReader(existing: path) else {
            throw StrataError(.invalidArgument, "no SQLite database at \(path)")
        }
        self.path = path
        self.file = file
        let first = try file.read(at: 0, count: SQLiteDatabaseHeader.size)
        let log = try SQLiteFileReader(existing: path + "-wal")
        self.log = log
        // The page size is the file header's; a database whose every page is still in the log
        // (an empty file) takes it from the log's header.
        var header: SQLiteDatabaseHeader
        if first.count < SQLiteDatabaseHeader.size, let log, let logPageSize = try SQLiteWALIndex.pageSize(of: log) {
            var blank = SQLiteDatabaseHeader.magic + [UInt8](repeating: 0, count: SQLiteDatabaseHeader.size - 16)
            blank[16] = UInt8((logPageSize >> 8) & 0xFF); blank[17] = UInt8(logPageSize == 65_536 ? 1 : logPageSize & 0xFF)
            blank[18] = 2; blank[19] = 2; blank[21] = 64; blank[22] = 32; blank[23] = 32
            header = try SQLiteDatabaseHeader(blank, file: path)
        } else {
            header = try SQLiteDatabaseHeader(first, file: path)
        }
        let wal = try log.map { [header] in try SQLiteWALIndex.read($0, pageSize: header.pageSize) } ?? .empty
        self.wal = wal
        // Every other field is the newest page 1's: the log's, when it holds one.
        if let offset = wal.frameData[1], let log {
            let newest = try log.read(at: offset, count: SQLiteDatabaseHeader.size)
            let fromLog = try SQLiteDatabaseHeader(newest, file: path + "-wal")
            guard fromLog.pageSize == header.pageSize else {
                throw SQLiteSpot(file: path, page: 1, field: "database header in the log").corrupt("page size \(fromLog.pageSize), not the file's \(header.pageSize)")
            }
            header = fromLog
        }
        self.header = header
        let fileSize = try file.size()
        let filePages = UInt32(clamping: fileSize / Int64(header.pageSize))
        if let committed = wal.pageCount {
            pageCount = committed
        } else if header.versionValidFor == header.changeCounter, header.recordedPageCount > 0 {
            pageCount = header.recordedPageCount
        } else {
            pageCount = filePages
        }
        storedPages = Int(filePages) + wal.frameData.count
        guard pageCount >= 1 else {
            throw SQLiteSpot(file: path, page: 0, field: "database header").corrupt("the database has no pages (file of \(fileSize) bytes)")
        }
    }

    /// Page `number`'s bytes (a whole page).
    func page(_ number: UInt32, _ what: @autoclosure () -> String) throws -> [UInt8] {
        guard number >= 1, number <= pageCount else {
            throw SQLiteSpot(file: path, page: 0, field: what()).corrupt("page \(number) is outside the database's \(pageCount) pages")
        }
        if let cached = cache.withLock({ $0[number] }) { return cached }
        let bytes: [UInt8]
        if let offset = wal.frameData[number], let log {
            bytes = try log.read(at: offset, count: pageSize)
        } else {
            bytes = try file.read(at: Int64(number - 1) * Int64(pageSize), count: pageSize)
        }
        guard bytes.count == pageSize else {
            throw SQLiteSpot(file: path, page: number, field: what()).corrupt("the file ends \(bytes.count) bytes into the page")
        }
        cache.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[number] = bytes
        }
        return bytes
    }
}
