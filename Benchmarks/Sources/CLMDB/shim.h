/* The part of the LMDB API the benchmark uses, declared here so the package builds without
 * liblmdb installed. The library itself is opened with dlopen("liblmdb.so.0") at run time.
 * Values follow lmdb.h of LMDB 0.9. */
#include <stddef.h>

typedef struct MDB_env MDB_env;
typedef struct MDB_txn MDB_txn;
typedef struct MDB_cursor MDB_cursor;
typedef unsigned int MDB_dbi;

typedef struct clmdb_val {
    size_t mv_size;
    void *mv_data;
} clmdb_val;

enum {
    CLMDB_NOSUBDIR = 0x4000,
    CLMDB_NOSYNC = 0x10000,
    CLMDB_RDONLY = 0x20000,
    CLMDB_NOTLS = 0x200000,
    CLMDB_NORDAHEAD = 0x800000,
    CLMDB_CREATE = 0x40000,
    CLMDB_APPEND = 0x20000,
    CLMDB_NOTFOUND = -30798,
    CLMDB_FIRST = 0,
    CLMDB_NEXT = 8
};

typedef int (*clmdb_env_create_f)(MDB_env **env);
typedef int (*clmdb_env_set_mapsize_f)(MDB_env *env, size_t size);
typedef int (*clmdb_env_set_maxreaders_f)(MDB_env *env, unsigned int readers);
typedef int (*clmdb_env_open_f)(MDB_env *env, const char *path, unsigned int flags, unsigned int mode);
typedef void (*clmdb_env_close_f)(MDB_env *env);
typedef int (*clmdb_txn_begin_f)(MDB_env *env, MDB_txn *parent, unsigned int flags, MDB_txn **txn);
typedef int (*clmdb_txn_commit_f)(MDB_txn *txn);
typedef void (*clmdb_txn_abort_f)(MDB_txn *txn);
typedef void (*clmdb_txn_reset_f)(MDB_txn *txn);
typedef int (*clmdb_txn_renew_f)(MDB_txn *txn);
typedef int (*clmdb_dbi_open_f)(MDB_txn *txn, const char *name, unsigned int flags, MDB_dbi *dbi);
typedef int (*clmdb_get_f)(MDB_txn *txn, MDB_dbi dbi, clmdb_val *key, clmdb_val *data);
typedef int (*clmdb_put_f)(MDB_txn *txn, MDB_dbi dbi, clmdb_val *key, clmdb_val *data, unsigned int flags);
typedef int (*clmdb_cursor_open_f)(MDB_txn *txn, MDB_dbi dbi, MDB_cursor **cursor);
typedef int (*clmdb_cursor_get_f)(MDB_cursor *cursor, clmdb_val *key, clmdb_val *data, int op);
typedef void (*clmdb_cursor_close_f)(MDB_cursor *cursor);
typedef const char *(*clmdb_strerror_f)(int err);
