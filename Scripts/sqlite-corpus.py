#!/usr/bin/env python3
# Writes SQLite files with the real SQLite library (Python's sqlite3 module) and a JSON dump of
# each, for SQLiteCorpusTests (STRATA_SQLITE_FILES=DIR swift test --filter SQLiteCorpusTests):
# page sizes from 512 to 65536, UTF-8 and UTF-16 databases, rows large enough for overflow
# chains, deletes that leave free pages, auto-vacuum, and databases whose latest transactions
# are only in the -wal log (copied while the writing connection is still open).
#
#   python3 Scripts/sqlite-corpus.py DIR [COUNT]
#   python3 Scripts/sqlite-corpus.py --dump FILE...   (a FILE.json beside each existing database,
#                                                     e.g. Core Data stores collected from elsewhere)
import json, os, random, shutil, sqlite3, struct, sys

def value(rng):
    kind = rng.randrange(8)
    if kind == 0: return None
    if kind == 1: return rng.choice([0, 1, -1, 127, -129, 2**31, -2**47, 2**63 - 1, -2**63])
    if kind == 2: return rng.randrange(-2**40, 2**40)
    if kind == 3: return rng.choice([0.5, -1e300, 5e-324, float(rng.randrange(-999, 999)) / 7])
    if kind == 4: return "".join(rng.choice(["a", "é", "日本", "🌋", " ", "quake"]) for _ in range(rng.randrange(30)))
    if kind == 5: return "x" * rng.randrange(100, 20000)
    if kind == 6: return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 9000)))
    return bytes(rng.randrange(256) for _ in range(rng.randrange(8)))

def encode(v):
    if v is None: return None
    if isinstance(v, int): return {"i": str(v)}
    if isinstance(v, float): return {"r": struct.pack(">d", v).hex()}
    if isinstance(v, str): return {"t": v}
    return {"b": v.hex()}

def dump(connection):
    tables = [r[0] for r in connection.execute("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")]
    out = {}
    for table in tables:
        columns = [r[1] for r in connection.execute(f'PRAGMA table_info("{table}")')]
        rows = connection.execute(f'SELECT rowid, * FROM "{table}" ORDER BY rowid').fetchall()
        out[table] = [[str(r[0]), [encode(v) for v in r[1:]]] for r in rows]
    return out

def make(directory, index, rng):
    name = os.path.join(directory, f"db{index}.sqlite")
    for suffix in ["", "-wal", "-shm"]:
        if os.path.exists(name + suffix): os.remove(name + suffix)
    work = os.path.join(directory, f".work{index}.sqlite")
    for suffix in ["", "-wal", "-shm"]:
        if os.path.exists(work + suffix): os.remove(work + suffix)
    connection = sqlite3.connect(work, isolation_level=None)
    connection.execute(f"PRAGMA page_size = {rng.choice([512, 1024, 4096, 8192, 65536])}")
    if rng.random() < 0.3: connection.execute(f"PRAGMA encoding = '{rng.choice(['UTF-16le', 'UTF-16be'])}'")
    if rng.random() < 0.3: connection.execute("PRAGMA auto_vacuum = FULL")
    wal = rng.random() < 0.6
    if wal:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA wal_autocheckpoint = 0")
    for t in range(rng.randrange(1, 5)):
        connection.execute(f"CREATE TABLE Z{t} (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZA, ZB, ZC)")
        connection.execute(f"CREATE INDEX Z{t}_ZA ON Z{t} (Z_ENT)")
        for batch in range(rng.randrange(1, 6)):
            connection.execute("BEGIN")
            for _ in range(rng.randrange(1, 400)):
                connection.execute(f"INSERT INTO Z{t} (Z_ENT, ZA, ZB, ZC) VALUES (?, ?, ?, ?)", (rng.randrange(5), value(rng), value(rng), value(rng)))
            if rng.random() < 0.4:
                connection.execute(f"DELETE FROM Z{t} WHERE Z_PK % 3 = 0")
            if rng.random() < 0.4:
                connection.execute(f"UPDATE Z{t} SET ZA = ? WHERE Z_PK % 5 = 1", (value(rng),))
            connection.execute("COMMIT")
            if wal and rng.random() < 0.2: connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
    expected = dump(connection)
    # Copied while the connection is open: a WAL database keeps its newest transactions in -wal.
    for suffix in ["", "-wal"]:
        if os.path.exists(work + suffix): shutil.copyfile(work + suffix, name + suffix)
    connection.close()
    for suffix in ["", "-wal", "-shm"]:
        if os.path.exists(work + suffix): os.remove(work + suffix)
    with open(name + ".json", "w") as f: json.dump(expected, f)

def main():
    if sys.argv[1] == "--dump":
        for path in sys.argv[2:]:
            connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            with open(path + ".json", "w") as f: json.dump(dump(connection), f)
            connection.close()
        print(f"{len(sys.argv) - 2} dumps written")
        return
    directory = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    os.makedirs(directory, exist_ok=True)
    for index in range(count):
        make(directory, index, random.Random(index))
    print(f"{count} databases in {directory} (SQLite {sqlite3.sqlite_version})")

main()
