// LMDBPeer: the workloads on LMDB (liblmdb.so.0, opened with dlopen), default sync settings
// (MDB_NOSYNC for non-durable runs), MDB_NOTLS so read transactions can move between threads.
import CLMDB
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The LMDB functions, resolved at run time.
struct LMDBLibrary: @unchecked Sendable {
    // @unchecked: immutable after loading; the function pointers are plain C symbols.
    let envCreate: clmdb_env_create_f
    let envSetMapsize: clmdb_env_set_mapsize_f
    let envSetMaxreaders: clmdb_env_set_maxreaders_f
    let envOpen: clmdb_env_open_f
    let envClose: clmdb_env_close_f
    let txnBegin: clmdb_txn_begin_f
    let txnCommit: clmdb_txn_commit_f
    let txnAbort: clmdb_txn_abort_f
    let txnReset: clmdb_txn_reset_f
    let txnRenew: clmdb_txn_renew_f
    let dbiOpen: clmdb_dbi_open_f
    let get: clmdb_get_f
    let put: clmdb_put_f
    let cursorOpen: clmdb_cursor_open_f
    let cursorGet: clmdb_cursor_get_f
    let cursorClose: clmdb_cursor_close_f
    let strerror: clmdb_strerror_f

    static let installHint = "LMDB is not installed: run `apt-get install -y liblmdb-dev` (Debian/Ubuntu) or `brew install lmdb` (macOS), then rerun"

    /// Loads liblmdb, or explains how to install it.
    static let shared: Result<LMDBLibrary, BenchError> = {
        let names = ["liblmdb.so.0", "liblmdb.so", "liblmdb.dylib", "/opt/homebrew/lib/liblmdb.dylib", "/usr/local/lib/liblmdb.dylib"]
        guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW) }).first else { return .failure(BenchError(installHint)) }
        func symbol<T>(_ name: String, _: T.Type) throws -> T {
            guard let pointer = dlsym(handle, name) else { throw BenchError("liblmdb lacks \(name); \(installHint)") }
            return unsafeBitCast(pointer, to: T.self)
        }
        do {
            return .success(LMDBLibrary(
                envCreate: try symbol("mdb_env_create", clmdb_env_create_f.self),
                envSetMapsize: try symbol("mdb_env_set_mapsize", clmdb_env_set_mapsize_f.self),
                envSetMaxreaders: try symbol("mdb_env_set_maxreaders", clmdb_env_set_maxreaders_f.self),
                envOpen: try symbol("mdb_env_open", clmdb_env_open_f.self),
                envClose: try symbol("mdb_env_close", clmdb_env_close_f.self),
                txnBegin: try symbol("mdb_txn_begin", clmdb_txn_begin_f.self),
                txnCommit: try symbol("mdb_txn_commit", clmdb_txn_commit_f.self),
                txnAbort: try symbol("mdb_txn_abort", clmdb_txn_abort_f.self),
                txnReset: try symbol("mdb_txn_reset", clmdb_txn_reset_f.self),
                txnRenew: try symbol("mdb_txn_renew", clmdb_txn_renew_f.self),
                dbiOpen: try symbol("mdb_dbi_open", clmdb_dbi_open_f.self),
                get: try symbol("mdb_get", clmdb_get_f.self),
                put: try symbol("mdb_put", clmdb_put_f.self),
                cursorOpen: try symbol("mdb_cursor_open", clmdb_cursor_open_f.self),
                cursorGet: try symbol("mdb_cursor_get", clmdb_cursor_get_f.self),
                cursorClose: try symbol("mdb_cursor_close", clmdb_cursor_close_f.self),
                strerror: try symbol("mdb_strerror", clmdb_strerror_f.self)))
        } catch let error as BenchError {
            return .failure(error)
        } catch {
            return .failure(BenchError("\(error)"))
        }
    }()
}

final class LMDBPeer: KeyValuePeer {
    static let name = "lmdb"
    let lib: LMDBLibrary
    var env: OpaquePointer?
    var dbi: MDB_dbi = 0

    init(path: String, durable: Bool) throws {
        lib = try LMDBLibrary.shared.get()
        var env: OpaquePointer?
        try check(lib.envCreate(&env), "mdb_env_create")
        self.env = env
        try check(lib.envSetMapsize(env, 16 << 30), "mdb_env_set_mapsize")
        try check(lib.envSetMaxreaders(env, 126), "mdb_env_set_maxreaders")
        var flags = UInt32(CLMDB_NOSUBDIR | CLMDB_NOTLS)
        if !durable { flags |= UInt32(CLMDB_NOSYNC) }
        try check(lib.envOpen(env, path, flags, 0o644), "mdb_env_open")
        var txn: OpaquePointer?
        try check(lib.txnBegin(env, nil, 0, &txn), "mdb_txn_begin")
        try check(lib.dbiOpen(txn, nil, 0, &dbi), "mdb_dbi_open")
        try check(lib.txnCommit(txn), "mdb_txn_commit")
    }

    func check(_ result: Int32, _ call: String) throws {
        if result != 0 { throw BenchError("\(call): \(String(cString: lib.strerror(result)!))") }
    }

    func bulkLoad(_ n: Int) throws {
        var txn: OpaquePointer?
        try check(lib.txnBegin(env, nil, 0, &txn), "mdb_txn_begin")
        for id in 1...UInt64(n) { try put(txn, id) }
        try check(lib.txnCommit(txn), "mdb_txn_commit")
    }

    private func put(_ txn: OpaquePointer?, _ id: UInt64) throws {
        var key = id.bigEndian
        var value = Records.value(id)
        try withUnsafeMutableBytes(of: &key) { k in
            try value.withUnsafeMutableBytes { v in
                var kv = clmdb_val(mv_size: 8, mv_data: k.baseAddress)
                var vv = clmdb_val(mv_size: v.count, mv_data: v.baseAddress)
                try check(lib.put(txn, dbi, &kv, &vv, 0), "mdb_put")
            }
        }
    }

    @inline(__always) func lookup(_ txn: OpaquePointer?, _ id: UInt64) -> Double {
        var key = id.bigEndian
        return withUnsafeMutableBytes(of: &key) { k in
            var kv = clmdb_val(mv_size: 8, mv_data: k.baseAddress)
            var vv = clmdb_val(mv_size: 0, mv_data: nil)
            guard lib.get(txn, dbi, &kv, &vv) == 0 else { return 0 }
            return Records.magnitude(UnsafeRawBufferPointer(start: vv.mv_data, count: vv.mv_size))
        }
    }

    func lookupInOneTransaction(_ ids: [UInt64]) throws -> Double {
        var txn: OpaquePointer?
        try check(lib.txnBegin(env, nil, UInt32(CLMDB_RDONLY), &txn), "mdb_txn_begin")
        defer { lib.txnAbort(txn) }
        var sum = 0.0
        for id in ids { sum += lookup(txn, id) }
        return sum
    }

    func lookupEachInOwnTransaction(_ ids: [UInt64]) throws -> Double {
        var txn: OpaquePointer?
        try check(lib.txnBegin(env, nil, UInt32(CLMDB_RDONLY), &txn), "mdb_txn_begin")
        defer { lib.txnAbort(txn) }
        var sum = 0.0
        for id in ids {
            lib.txnReset(txn)
            try check(lib.txnRenew(txn), "mdb_txn_renew")
            sum += lookup(txn, id)
        }
        return sum
    }

    func scan() throws -> (Int, Double) {
        var txn: OpaquePointer?
        try check(lib.txnBegin(env, nil, UInt32(CLMDB_RDONLY), &txn), "mdb_txn_begin")
        defer { lib.txnAbort(txn) }
        var cursor: OpaquePointer?
        try check(lib.cursorOpen(txn, dbi, &cursor), "mdb_cursor_open")
        defer { lib.cursorClose(cursor) }
        var kv = clmdb_val(mv_size: 0, mv_data: nil)
        var vv = clmdb_val(mv_size: 0, mv_data: nil)
        var count = 0
        var sum = 0.0
        var op = Int32(CLMDB_FIRST)
        while lib.cursorGet(cursor, &kv, &vv, op) == 0 {
            sum += Records.magnitude(UnsafeRawBufferPointer(start: vv.mv_data, count: vv.mv_size))
            count += 1
            op = Int32(CLMDB_NEXT)
        }
        return (count, sum)
    }

    func commitOne(_ id: UInt64) throws {
        var txn: OpaquePointer?
        try check(lib.txnBegin(env, nil, 0, &txn), "mdb_txn_begin")
        try put(txn, id)
        try check(lib.txnCommit(txn), "mdb_txn_commit")
    }

    func companion() throws -> KeyValuePeer { self }

    func close() throws {
        if let env { lib.envClose(env) }
        env = nil
    }

    static func storeBytes(_ path: String) -> Int64 { fileSize(path) }
}
