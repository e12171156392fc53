#!/usr/bin/env python3
"""Independent reader for the StrataStorage on-disk format, versions 1 and 2.

Written from FORMAT.md alone (standard library only).

Usage:
    strata_reader.py PATH            print every user tree's records as JSON
    strata_reader.py --selftest      check the checksum and varint test vectors
    strata_reader.py -v PATH         also print diagnostics to stderr
    strata_reader.py --check-space PATH
                                     additionally verify the free-space tree and
                                     the page accounting of FORMAT.md section 9
    strata_reader.py --history PATH  print a native store's persistent history
                                     (FORMAT.md section 19.6) as JSON instead
    strata_reader.py --binary PATH   print a .binary store's metadata, schema and
                                     rows (FORMAT.md section 20) as JSON

Output shape (keys sorted):
    {"generation": G, "trees": {"name": [["keyhex", "valuehex"], ...], ...}}

Exit status: 0 ok, 1 invalid/corrupt input (one-line message on stderr).
"""

import json
import os
import struct
import sys

# --------------------------------------------------------------------------- #
# Constants (FORMAT.md)                                                       #
# --------------------------------------------------------------------------- #

STORE_MAGIC = b"STRATAdb"
WAL_MAGIC = b"STRATAwl"
SHM_MAGIC = b"STRATAsh"
STORE_FORMAT_VERSIONS = (1, 2)  # §3: version 2 leaves may carry a key prefix (§7)
WAL_FORMAT_VERSIONS = (1, 2)   # §10: version 2 adds page patches

HEADER_COPY_OFFSETS = (0, 512)   # §3: copy A at 0, copy B at 512
HEADER_COPY_SIZE = 256
META_SIZE = 136                  # §4
DESC_SIZE = 56                   # §5
PAGE_HEADER_SIZE = 40            # §6
WAL_HEADER_SIZE = 60             # §10

TYPE_BRANCH = 1
TYPE_LEAF = 2
TYPE_OVERFLOW = 3
TYPE_COMMIT = 4
TYPE_PATCHES = 5
TYPE_NAMES = {1: "branch", 2: "leaf", 3: "overflow", 4: "commit record",
              5: "patch frame"}

VERBOSE = False


class FormatError(Exception):
    """Anything invalid in the files."""


def fail(msg):
    raise FormatError(msg)


def note(msg):
    if VERBOSE:
        sys.stderr.write("strata_reader: " + msg + "\n")


# --------------------------------------------------------------------------- #
# Checksum (§1): low 32 bits of XXH64                                         #
# --------------------------------------------------------------------------- #

_M64 = 0xFFFFFFFFFFFFFFFF
_P1 = 0x9E3779B185EBCA87
_P2 = 0xC2B2AE3D27D4EB4F
_P3 = 0x165667B19E3779F9
_P4 = 0x85EBCA77C2B2AE63
_P5 = 0x27D4EB2F165667C5


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & _M64


def _round(acc, lane):
    return (_rotl((acc + lane * _P2) & _M64, 31) * _P1) & _M64


def _merge(acc, v):
    return ((acc ^ _round(0, v)) * _P1 + _P4) & _M64


def xxh64(data, seed=0):
    """XXH64 of data (bytes), as published by the xxHash project."""
    n = len(data)
    p = 0
    if n >= 32:
        v1 = (seed + _P1 + _P2) & _M64
        v2 = (seed + _P2) & _M64
        v3 = seed & _M64
        v4 = (seed - _P1) & _M64
        lanes = struct.unpack_from("<%dQ" % ((n // 32) * 4), data, 0)
        for i in range(0, len(lanes), 4):
            v1 = _round(v1, lanes[i])
            v2 = _round(v2, lanes[i + 1])
            v3 = _round(v3, lanes[i + 2])
            v4 = _round(v4, lanes[i + 3])
        p = (n // 32) * 32
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M64
        for v in (v1, v2, v3, v4):
            h = _merge(h, v)
    else:
        h = (seed + _P5) & _M64
    h = (h + n) & _M64
    while n - p >= 8:
        (k,) = struct.unpack_from("<Q", data, p)
        h ^= _round(0, k)
        h = (_rotl(h, 27) * _P1 + _P4) & _M64
        p += 8
    if n - p >= 4:
        (k,) = struct.unpack_from("<I", data, p)
        h ^= (k * _P1) & _M64
        h = (_rotl(h, 23) * _P2 + _P3) & _M64
        p += 4
    while p < n:
        h ^= (data[p] * _P5) & _M64
        h = (_rotl(h, 11) * _P1) & _M64
        p += 1
    h ^= h >> 33
    h = (h * _P2) & _M64
    h ^= h >> 29
    h = (h * _P3) & _M64
    h ^= h >> 32
    return h


def checksum(data, seed=0):
    """The format's 32-bit checksum: low 32 bits of XXH64(data, seed)."""
    return xxh64(bytes(data), seed & 0xFFFFFFFF) & 0xFFFFFFFF

# --------------------------------------------------------------------------- #
# varint (§1): unsigned LEB128, at most 10 bytes                              #
# --------------------------------------------------------------------------- #

def varint_decode(buf, pos, end=None):
    """Return (value, new_pos). Raises FormatError on truncation/overlong."""
    if end is None:
        end = len(buf)
    value = 0
    shift = 0
    for i in range(10):
        if pos + i >= end:
            fail("truncated varint at offset %d" % pos)
        b = buf[pos + i]
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            if value >= 1 << 64:
                fail("varint at offset %d exceeds 64 bits" % pos)
            return value, pos + i + 1
    fail("varint longer than 10 bytes at offset %d" % pos)


def varint_encode(value):
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


# --------------------------------------------------------------------------- #
# Self test                                                                   #
# --------------------------------------------------------------------------- #

def selftest():
    problems = []

    def check(cond, what):
        if not cond:
            problems.append(what)

    # Checksum vectors from §1.
    check(xxh64(b"") == 0xEF46DB3751D8E999, "xxh64(empty)")
    check(xxh64(b"abc") == 0x44BC2CF5AD770999, "xxh64('abc')")
    check(xxh64(b"123456789") == 0x8CB841DB40E6AE83, "xxh64('123456789')")
    check(checksum(b"123456789") == 0x40E6AE83, "checksum('123456789')")
    check(checksum(b"123456789", seed=1) == 0xE8079790, "checksum('123456789', seed 1)")

    # varint examples from §1.
    for value, enc in ((0, b"\x00"), (127, b"\x7f"), (128, b"\x80\x01"),
                       (300, b"\xac\x02")):
        check(varint_encode(value) == enc, "varint encode %d" % value)
        try:
            v, p = varint_decode(enc, 0)
            check(v == value and p == len(enc), "varint decode %s" % enc.hex())
        except FormatError as e:
            problems.append("varint decode %s: %s" % (enc.hex(), e))
    # Max 10 bytes: 2**64-1 needs exactly 10; an 11-byte varint is rejected.
    check(len(varint_encode((1 << 64) - 1)) == 10, "varint 2**64-1 is 10 bytes")
    try:
        varint_decode(b"\x80" * 10 + b"\x00", 0)
        problems.append("11-byte varint accepted")
    except FormatError:
        pass

    # Worked example (§18) leaf cell: 01 04 01 68 69.
    cell = bytes.fromhex("0104016869")
    k, p = varint_decode(cell, 0)
    w, p = varint_decode(cell, p)
    check(k == 1 and w == 4 and w >> 1 == 2 and w & 1 == 0
          and cell[p:p + k] == b"\x01" and cell[p + k:] == b"hi",
          "worked example leaf cell")

    if problems:
        for pr in problems:
            sys.stderr.write("selftest FAILED: %s\n" % pr)
        return 1
    print("selftest ok: checksum vectors (empty, abc, 123456789, seeded) "
          "and varint examples (0, 127, 128, 300) pass")
    return 0


# --------------------------------------------------------------------------- #
# Structures                                                                  #
# --------------------------------------------------------------------------- #

def valid_page_size(ps):
    return 1024 <= ps <= 65536 and (ps & (ps - 1)) == 0


def u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def u64(b, o):
    return struct.unpack_from("<Q", b, o)[0]


def parse_descriptor(b, o=0):
    """§5 tree descriptor (56 bytes)."""
    if len(b) - o < DESC_SIZE:
        fail("tree descriptor shorter than 56 bytes")
    return {
        "root": u32(b, o + 0),
        "depth": u16(b, o + 4),
        "flags": u16(b, o + 6),
        "records": u64(b, o + 8),
        "branch_pages": u64(b, o + 16),
        "leaf_pages": u64(b, o + 24),
        "overflow_pages": u64(b, o + 32),
        "created": u64(b, o + 40),
        "modified": u64(b, o + 48),
    }


def parse_meta(b, o):
    """§4 meta (136 bytes)."""
    return {
        "generation": u64(b, o + 0),
        "catalog": parse_descriptor(b, o + 8),
        "freespace": parse_descriptor(b, o + 64),
        "page_count": u32(b, o + 120),
        "time_ms": u64(b, o + 128),
    }


def parse_header_copy(buf, off):
    """§3. Returns dict or None if the copy is not valid."""
    c = buf[off:off + HEADER_COPY_SIZE]
    if len(c) < HEADER_COPY_SIZE:
        return None, False
    magic_ok = c[0:8] == STORE_MAGIC
    version = u32(c, 8)
    ps = u32(c, 12)
    crc = u32(c, 252)
    if not magic_ok or version not in STORE_FORMAT_VERSIONS or not valid_page_size(ps) \
            or crc != checksum(c[0:252]):
        return None, magic_ok
    return {
        "page_size": ps,
        "uuid": c[16:32],
        "sequence": u64(c, 32),
        "meta": parse_meta(c, 40),
        "copy": "A" if off == 0 else "B",
    }, True


# --------------------------------------------------------------------------- #
# Store                                                                       #
# --------------------------------------------------------------------------- #

class Store:
    def __init__(self, path):
        self.path = path
        try:
            with open(path, "rb") as f:
                self.data = f.read()
        except OSError as e:
            fail("cannot read store file %s: %s" % (path, e.strerror))
        self.wal = None
        try:
            with open(path + "-wal", "rb") as f:
                self.wal = f.read()
        except FileNotFoundError:
            self.wal = None
        except OSError as e:
            fail("cannot read WAL %s-wal: %s" % (path, e.strerror))

        self.read_file_header()
        self.scan_wal()
        self.page_cache = {}

    # ---- §3 / §11 step 1 ------------------------------------------------- #
    def read_file_header(self):
        copies = []
        any_magic = False
        for off in HEADER_COPY_OFFSETS:
            h, magic_ok = parse_header_copy(self.data, off)
            any_magic = any_magic or magic_ok
            if h is not None:
                copies.append(h)
            else:
                note("header copy %s is not valid" % ("A" if off == 0 else "B"))
        if not copies:
            if not any_magic:
                fail("not a Strata store (bad magic in both header copies)")
            fail("store file header corrupt: neither header copy is valid")
        if len(copies) == 2 and copies[0]["sequence"] == copies[1]["sequence"]:
            # Only legal at creation (sequence 1, both copies written).
            if copies[0]["meta"] != copies[1]["meta"] \
                    or copies[0]["page_size"] != copies[1]["page_size"]:
                fail("header copies have equal checkpoint sequence %d but differ"
                     % copies[0]["sequence"])
        if len(copies) == 2 and copies[0]["uuid"] != copies[1]["uuid"]:
            fail("header copies disagree on the store UUID")
        best = max(copies, key=lambda h: h["sequence"])
        # §3: checkpoint with sequence s writes A when s is even, B when odd;
        # at creation both copies have sequence 1.
        s = best["sequence"]
        if s == 0:
            fail("header checkpoint sequence is 0 (must start at 1)")
        self.header = best
        self.page_size = best["page_size"]
        self.uuid = best["uuid"]
        self.m0 = best["meta"]
        self.C = self.m0["generation"]
        note("store header: copy %s, sequence %d, page size %d, checkpointed "
             "generation %d, page count %d"
             % (best["copy"], s, self.page_size, self.C, self.m0["page_count"]))
        if len(self.data) < self.page_size:
            fail("store file shorter than one page")

    # ---- §10 / §11 steps 2-5 -------------------------------------------- #
    def scan_wal(self):
        ps = self.page_size
        self.page_map = {}          # page number -> offset in WAL
        self.meta = self.m0
        self.wal_info = None
        wal = self.wal
        if wal is None:
            note("no WAL file: latest state is the checkpointed one")
            return
        if len(wal) < WAL_HEADER_SIZE:
            note("WAL header missing (file shorter than 60 bytes)")
            return
        h = wal[0:WAL_HEADER_SIZE]
        if h[0:8] != WAL_MAGIC or u32(h, 56) != checksum(h[0:56]):
            note("WAL header invalid: WAL holds nothing")
            return
        if u32(h, 8) not in WAL_FORMAT_VERSIONS:
            # §11 step 2: an intact header of an unknown version is refused.
            fail("WAL header has version %d, this reader knows %s"
                 % (u32(h, 8), WAL_FORMAT_VERSIONS))
        if h[16:32] != self.uuid or u32(h, 12) != ps:
            note("WAL header belongs to another store/page size: ignored")
            return
        version = u32(h, 8)
        salt = u32(h, 32)
        epoch = u64(h, 40)
        base = u64(h, 48)
        chain = u32(h, 56)      # header checksum seeds the chain
        self.wal_info = {"salt": salt, "epoch": epoch, "base": base}
        note("WAL header: salt %08x, epoch %d, base generation %d"
             % (salt, epoch, base))

        transactions = []       # list of (generation, meta, [(pgno, off)])
        pending = []            # versions: (pgno, ("frame", off) | ("patch", frame, at), gen, i)
        pending_frames = 0
        nframes = 0

        def patch_area(fr, area, i):
            # §10 page patches: u16 count, then entries; each checked here.
            out = []
            if version < 2:
                return out
            count = u16(fr, area)
            at = area + 2
            for _ in range(count):
                if at + 18 > ps:
                    fail("WAL frame %d: patch entry at %d outside the block" % (i, at))
                pg, bframe, boff, depth = u32(fr, at), u32(fr, at + 4), u16(fr, at + 8), fr[at + 10]
                if pg == 0 or not 1 <= depth <= 8 or bframe >= i \
                        or (depth == 1) != (boff == 0):
                    fail("WAL frame %d: patch entry at %d breaks §10 (page %d, "
                         "base %d+%d, depth %d)" % (i, at, pg, bframe, boff, depth))
                runs = u16(fr, at + 16)
                q = at + 18
                for _ in range(runs):
                    if q + 4 > ps:
                        fail("WAL frame %d: patch runs past the block" % i)
                    o, n = u16(fr, q), u16(fr, q + 2)
                    if o < 12 or n < 1 or o + n > ps or q + 4 + n > ps:
                        fail("WAL frame %d: patch run %d+%d outside the page" % (i, o, n))
                    q += 4 + n
                out.append((pg, ("patch", i, at), u64(fr, 24), i))
                at = q
            return out
        i = 0
        while True:
            off = (i + 1) * ps
            if off + ps > len(wal):
                break
            fr = wal[off:off + ps]
            if u32(fr, 4) != salt:
                break
            if u32(fr, 0) != checksum(fr[12:]):
                break
            expect = checksum(fr[0:8], seed=chain)
            if u32(fr, 8) != expect:
                break
            chain = expect
            nframes += 1
            typ = fr[12]
            pgno = u32(fr, 16)
            if typ == TYPE_COMMIT:
                if pgno != 0:
                    fail("WAL frame %d: commit record with page number %d"
                         % (i, pgno))
                meta = parse_meta(fr, 40)
                gen = u64(fr, 24)
                if gen != meta["generation"]:
                    fail("WAL frame %d: commit record generation %d but its "
                         "meta says %d" % (i, gen, meta["generation"]))
                count = u32(fr, 176)
                if count != pending_frames:
                    fail("WAL frame %d: commit record says %d frames, "
                         "found %d" % (i, count, pending_frames))
                pending += patch_area(fr, 180, i)
                transactions.append((gen, meta, pending, i))
                pending = []
                pending_frames = 0
            elif typ in (TYPE_BRANCH, TYPE_LEAF, TYPE_OVERFLOW):
                if pgno == 0:
                    fail("WAL frame %d: page frame for page 0" % i)
                pending.append((pgno, ("frame", off), u64(fr, 24), i))
                pending_frames += 1
            elif typ == TYPE_PATCHES and version >= 2:
                pending += patch_area(fr, 40, i)
                pending_frames += 1
            else:
                fail("WAL frame %d: valid frame with unknown page type %d"
                     % (i, typ))
            i += 1
        note("WAL scan: %d valid frames, %d committed transactions, "
             "%d frames in uncommitted tail"
             % (nframes, len(transactions), pending_frames))

        # §10: commit records carry consecutive generations starting at base+1.
        for k, (gen, _, _, fi) in enumerate(transactions):
            if gen != base + 1 + k:
                fail("WAL frame %d: commit generation %d, expected %d "
                     "(WAL base %d)" % (fi, gen, base + 1 + k, base))

        # §11 step 3: ignore <= C; the rest must be C+1, C+2, ...
        live = [t for t in transactions if t[0] > self.C]
        for k, (gen, _, _, fi) in enumerate(live):
            if gen != self.C + 1 + k:
                fail("WAL frame %d: commit generation %d, expected %d after "
                     "checkpointed generation %d" % (fi, gen, self.C + 1 + k,
                                                     self.C))
        ignored = len(transactions) - len(live)
        if ignored:
            note("ignored %d WAL transactions already checkpointed (<= %d)"
                 % (ignored, self.C))
        # §11 step 5: last page frame for P in a committed transaction after C.
        for gen, meta, frames, _ in live:
            for pgno, off, fgen, fi in frames:
                if fgen != gen:
                    # A page frame carries the generation whose commit wrote it.
                    fail("WAL frame %d: page %d has generation %d inside the "
                         "transaction committing generation %d"
                         % (fi, pgno, fgen, gen))
                self.page_map[pgno] = off
        self.wal_salt = salt
        if live:
            self.meta = live[-1][1]
        note("latest generation %d (%s), page count %d, %d pages resolved "
             "from the WAL" % (self.meta["generation"],
                               "WAL commit" if live else "store header",
                               self.meta["page_count"], len(self.page_map)))

    # ---- page access ----------------------------------------------------- #
    def wal_version(self, version, what):
        """A page version in the WAL: a whole frame, or a patch applied to
        its base (§10), recursively."""
        ps = self.page_size
        if version[0] == "frame":
            off = version[1]
            return self.wal[off:off + ps]
        _, frame, at = version
        block = self.wal[(frame + 1) * ps:(frame + 2) * ps]
        bframe, boff = u32(block, at + 4), u16(block, at + 8)
        if boff == 0:
            base = self.wal[(bframe + 1) * ps:(bframe + 2) * ps]
            if len(base) != ps or u32(base, 4) != self.wal_salt:
                fail("%s: patch base frame %d is not in this WAL life" % (what, bframe))
        else:
            base = self.wal_version(("patch", bframe, boff), what)
        page = bytearray(base)
        runs = u16(block, at + 16)
        q = at + 18
        for _ in range(runs):
            o, n = u16(block, q), u16(block, q + 2)
            page[o:o + n] = block[q + 4:q + 4 + n]
            q += 4 + n
        page[0:4] = block[at + 12:at + 16]
        return bytes(page)

    def get_page(self, pgno, what):
        """Latest version of page pgno (rule 5), verified per §6."""
        if pgno in self.page_cache:
            return self.page_cache[pgno]
        ps = self.page_size
        if pgno == 0:
            fail("%s: reference to page 0" % what)
        if pgno >= self.meta["page_count"]:
            fail("%s: page %d beyond page count %d"
                 % (what, pgno, self.meta["page_count"]))
        if pgno in self.page_map:
            page = self.wal_version(self.page_map[pgno], what)
            src = "WAL"
        else:
            off = pgno * ps
            page = self.data[off:off + ps]
            src = "store file"
            if len(page) != ps:
                fail("%s: page %d is neither in the WAL nor in the store file "
                     "(file has %d pages)" % (what, pgno, len(self.data) // ps))
        if u32(page, 0) != checksum(page[12:]):
            fail("%s: page %d (%s) checksum mismatch" % (what, pgno, src))
        if u32(page, 16) != pgno:
            fail("%s: page %d (%s) identifies itself as page %d"
                 % (what, pgno, src, u32(page, 16)))
        G = self.meta["generation"]
        if u64(page, 24) > G:
            fail("%s: page %d (%s) has generation %d > reader generation %d"
                 % (what, pgno, src, u64(page, 24), G))
        self.page_cache[pgno] = page
        return page

    # ---- trees (§7, §8, §13) -------------------------------------------- #
    def read_overflow(self, first, length, what, stats):
        ps = self.page_size
        cap = ps - PAGE_HEADER_SIZE
        npages = (length + cap - 1) // cap
        if npages == 0:
            fail("%s: overflow value of length 0" % what)
        out = bytearray()
        pg = first
        for n in range(npages):
            if pg == 0:
                fail("%s: overflow chain ends after %d of %d pages"
                     % (what, n, npages))
            page = self.get_page(pg, what)
            if page[12] != TYPE_OVERFLOW:
                fail("%s: page %d is a %s, expected overflow"
                     % (what, pg, TYPE_NAMES.get(page[12], "type %d" % page[12])))
            stats["pages"].append(pg)
            stats["overflow"] += 1
            nbytes = u32(page, 32)
            last = n == npages - 1
            want = length - cap * n if last else cap
            if nbytes != want:
                fail("%s: overflow page %d holds %d payload bytes, expected %d"
                     % (what, pg, nbytes, want))
            out += page[PAGE_HEADER_SIZE:PAGE_HEADER_SIZE + nbytes]
            nxt = u32(page, 20)
            if last and nxt != 0:
                fail("%s: overflow chain continues past its last page %d"
                     % (what, pg))
            pg = nxt
        return bytes(out)

    def walk_tree(self, desc, what, stats=None):
        """Yield (key, value) in key order, verifying as §13 asks."""
        ps = self.page_size
        usable = ps - PAGE_HEADER_SIZE
        if stats is None:
            stats = {}
        stats.update(branch=0, leaf=0, overflow=0, records=0, pages=[])
        root, depth = desc["root"], desc["depth"]
        if depth == 0 or root == 0:
            fail("%s: descriptor has root %d depth %d" % (what, root, depth))
        records = []
        prev_key = [None]

        def node_cells(page, pgno, typ):
            n = u16(page, 14)
            cs = u32(page, 32)
            garbage = u32(page, 36)
            # §6/§7: byte 13 of a leaf is its key prefix length; the prefix
            # is the last bytes of the page and every key of the leaf
            # begins with it (cells store the rest).
            pfx_len = page[13]
            if pfx_len and (typ != TYPE_LEAF or n == 0):
                fail("%s: page %d has a key prefix of %d bytes but is not a "
                     "leaf with cells" % (what, pgno, pfx_len))
            area_end = ps - pfx_len
            prefix = bytes(page[area_end:ps])
            slot_end = PAGE_HEADER_SIZE + 2 * n
            if cs > area_end or cs < slot_end:
                fail("%s: page %d content start %d out of range (cells %d)"
                     % (what, pgno, cs, n))
            cells = []
            used = 0
            for s in range(n):
                co = u16(page, PAGE_HEADER_SIZE + 2 * s)
                if co < cs or co >= area_end:
                    fail("%s: page %d slot %d offset %d outside cell area"
                         % (what, pgno, s, co))
                whole_extra = 0
                if typ == TYPE_LEAF:
                    k, p = varint_decode(page, co, area_end)
                    w, p = varint_decode(page, p, area_end)
                    key = prefix + bytes(page[p:p + k])
                    whole_extra = (pfx_len + len(varint_encode(k + pfx_len))
                                   - len(varint_encode(k)))
                    p += k
                    vlen, ovf = w >> 1, w & 1
                    if ovf:
                        if p + 4 > area_end:
                            fail("%s: page %d cell %d runs off the page"
                                 % (what, pgno, s))
                        vinfo = ("ovf", vlen, u32(page, p))
                        p += 4
                    else:
                        vinfo = ("inline", vlen, bytes(page[p:p + vlen]))
                        p += vlen
                    if p > area_end:
                        fail("%s: page %d cell %d runs off the page"
                             % (what, pgno, s))
                    cells.append((key, vinfo))
                else:
                    if co + 4 > ps:
                        fail("%s: page %d cell %d runs off the page"
                             % (what, pgno, s))
                    child = u32(page, co)
                    k, p = varint_decode(page, co + 4, ps)
                    key = bytes(page[p:p + k])
                    p += k
                    if p > ps:
                        fail("%s: page %d cell %d runs off the page"
                             % (what, pgno, s))
                    cells.append((key, child))
                size = p - co
                # The limit is on the cell with its whole key (§7).
                if size + whole_extra + 2 > usable // 4:
                    fail("%s: page %d cell %d is %d bytes with its slot and "
                         "whole key, limit %d" % (what, pgno, s,
                                                  size + whole_extra + 2,
                                                  usable // 4))
                used += size
            if used + garbage != area_end - cs:
                note("%s: page %d cell area %d bytes != cells %d + garbage %d"
                     % (what, pgno, area_end - cs, used, garbage))
                stats.setdefault("garbage_mismatch", []).append(pgno)
            for a, b in zip(cells, cells[1:]):
                if not a[0] < b[0]:
                    fail("%s: page %d keys not strictly increasing"
                         % (what, pgno))
            return cells

        def visit(pgno, level, lo, hi, seen):
            if pgno in seen:
                fail("%s: page %d reached twice" % (what, pgno))
            seen.add(pgno)
            page = self.get_page(pgno, what)
            typ = page[12]
            want = TYPE_LEAF if level == depth else TYPE_BRANCH
            if typ != want:
                fail("%s: page %d at level %d of %d is a %s, expected %s"
                     % (what, pgno, level, depth,
                        TYPE_NAMES.get(typ, "type %d" % typ), TYPE_NAMES[want]))
            stats["pages"].append(pgno)
            cells = node_cells(page, pgno, typ)
            for key, _ in cells:
                if (lo is not None and key < lo) or (hi is not None and key >= hi):
                    fail("%s: page %d key %s outside its parent's range"
                         % (what, pgno, key.hex()))
            if typ == TYPE_LEAF:
                stats["leaf"] += 1
                if u32(page, 20) != 0:
                    fail("%s: leaf page %d has nonzero link" % (what, pgno))
                for key, (kind, vlen, v) in cells:
                    if prev_key[0] is not None and not prev_key[0] < key:
                        fail("%s: records out of key order at %s"
                             % (what, key.hex()))
                    prev_key[0] = key
                    if kind == "ovf":
                        v = self.read_overflow(
                            v, vlen, "%s key %s" % (what, key.hex()), stats)
                    records.append((key, v))
            else:
                stats["branch"] += 1
                link = u32(page, 20)
                children = [c for _, c in cells] + [link]
                bounds = [lo] + [k for k, _ in cells] + [hi]
                for idx, child in enumerate(children):
                    visit(child, level + 1, bounds[idx], bounds[idx + 1], seen)

        visit(root, 1, None, None, set())
        stats["records"] = len(records)
        for field, got in (("records", stats["records"]),
                           ("branch_pages", stats["branch"]),
                           ("leaf_pages", stats["leaf"]),
                           ("overflow_pages", stats["overflow"])):
            if desc[field] != got:
                fail("%s: descriptor says %s = %d, tree has %d"
                     % (what, field, desc[field], got))
        return records

    def read_all(self):
        G = self.meta["generation"]
        cat_desc = self.meta["catalog"]
        cat_stats = {}
        catalog = self.walk_tree(cat_desc, "catalog", cat_stats)
        trees = {}
        self.tree_stats = {"<catalog>": cat_stats}
        for name_b, dbytes in catalog:
            try:
                name = name_b.decode("utf-8")
            except UnicodeDecodeError:
                fail("catalog: tree name %s is not UTF-8" % name_b.hex())
            if not 1 <= len(name_b) <= 255:
                fail("catalog: tree name of %d bytes" % len(name_b))
            if len(dbytes) != DESC_SIZE:
                fail("catalog: descriptor of tree %r is %d bytes"
                     % (name, len(dbytes)))
            d = parse_descriptor(dbytes)
            if not d["created"] <= d["modified"] <= G:
                fail("catalog: tree %r created %d / modified %d vs generation %d"
                     % (name, d["created"], d["modified"], G))
            st = {}
            recs = self.walk_tree(d, "tree %r" % name, st)
            self.tree_stats[name] = st
            note("tree %r: root %d depth %d, %d records, %d branch, %d leaf, "
                 "%d overflow pages" % (name, d["root"], d["depth"],
                                        len(recs), st["branch"], st["leaf"],
                                        st["overflow"]))
            trees[name] = [[k.hex(), v.hex()] for k, v in recs]
        return {"generation": G, "trees": trees}

    # ---- optional: free-space tree and page accounting (§9) ------------- #
    def check_space(self):
        fs_stats = {}
        free = self.walk_tree(self.meta["freespace"], "free-space tree",
                              fs_stats)
        owner = {}
        for name, st in list(self.tree_stats.items()) + [("<free-space>", fs_stats)]:
            for p in st["pages"]:
                if p in owner:
                    fail("page %d used by both %s and %s" % (p, owner[p], name))
                owner[p] = name
        G = self.meta["generation"]
        for key, val in free:
            if len(key) != 4 or len(val) != 16:
                fail("free-space tree: bad record %s -> %s" % (key.hex(), val.hex()))
            p = struct.unpack(">I", key)[0]
            a, f = struct.unpack("<QQ", val)
            if p in owner:
                fail("page %d is free (A=%d F=%d) but used by %s"
                     % (p, a, f, owner[p]))
            if not (a == f == 0 or a < f <= G):
                fail("free page %d has A=%d F=%d (generation %d)" % (p, a, f, G))
            owner[p] = "free"
        missing = [p for p in range(1, self.meta["page_count"]) if p not in owner]
        if missing:
            fail("pages neither used nor free: %s" % missing[:20])
        extra = [p for p in owner if p >= self.meta["page_count"] or p == 0]
        if extra:
            fail("pages outside 1..<pageCount accounted: %s" % extra[:20])
        note("page accounting ok: %d pages, %d free"
             % (self.meta["page_count"] - 1, len(free)))

    # ---- optional diagnostic: compare with the shared header (§14) ------ #
    def compare_shm(self):
        try:
            with open(self.path + "-shm", "rb") as f:
                shm = f.read(512)
        except OSError:
            note("no shared file")
            return
        if len(shm) < 512 or shm[0:8] != SHM_MAGIC \
                or u32(shm, 508) != checksum(shm[0:508]):
            note("shared header missing or invalid (informational only)")
            return
        m = parse_meta(shm, 80)
        note("shared header: salt %08x, committed frames %d, epoch %d, base %d, "
             "change counter %d, intact-from %d, latest generation %d%s"
             % (u32(shm, 32), u32(shm, 36), u64(shm, 40), u64(shm, 48),
                u64(shm, 56), u64(shm, 64), m["generation"],
                " (matches)" if m == self.meta else " (DIFFERS from WAL scan)"))


# --------------------------------------------------------------------------- #
# Native store: persistent history (FORMAT.md section 19.6)                   #
# --------------------------------------------------------------------------- #

def _text(buf, pos, what):
    n, pos = varint_decode(buf, pos)
    if pos + n > len(buf):
        fail("%s: text of %d bytes runs past its value" % (what, n))
    return buf[pos:pos + n].decode("utf-8"), pos + n


def _optional_text(buf, pos, what):
    marker, pos = varint_decode(buf, pos)
    if marker == 0:
        return None, pos
    n = marker - 1
    if pos + n > len(buf):
        fail("%s: text of %d bytes runs past its value" % (what, n))
    return buf[pos:pos + n].decode("utf-8"), pos + n


def _tagged_value(buf, pos, what):
    """One tagged value (FORMAT.md section 19.3), as JSON-friendly Python."""
    tag = buf[pos]
    pos += 1
    if tag == 0x00:
        return None, pos
    if tag == 0x01:
        raw, pos = varint_decode(buf, pos)
        return (raw >> 1) ^ -(raw & 1), pos
    if tag in (0x02, 0x08):
        return struct.unpack_from("<d", buf, pos)[0], pos + 8
    if tag == 0x03:
        return struct.unpack_from("<f", buf, pos)[0], pos + 4
    if tag in (0x04, 0x05, 0x0B, 0x0D):
        return _text(buf, pos, what)
    if tag in (0x06, 0x07):
        return tag == 0x07, pos
    if tag == 0x09:
        n, pos = varint_decode(buf, pos)
        return buf[pos:pos + n].hex(), pos + n
    if tag == 0x0A:
        return buf[pos:pos + 16].hex(), pos + 16
    if tag == 0x0C:
        entity, pos = varint_decode(buf, pos)
        key, pos = varint_decode(buf, pos)
        return [entity, key], pos
    if tag in (0x0E, 0x0F):
        # A double (0E) or date (0F) given as digits n and decimal places k:
        # varint zigzag(n) << 4 | k, the value n / 10^k (k <= 15).
        packed, pos = varint_decode(buf, pos)
        places = packed & 15
        z = packed >> 4
        n = (z >> 1) ^ -(z & 1)
        return float(n) / float(10 ** places), pos
    fail("%s: unknown value tag 0x%02x" % (what, tag))


def read_history(result):
    """The transactions of `result` (read_all's output), oldest first."""
    trees = result["trees"]
    entities = {}
    for khex, vhex in trees.get("strata/meta", []):
        if bytes.fromhex(khex) == b"schema":
            schema = json.loads(bytes.fromhex(vhex).decode("utf-8"))
            entities = {e["number"]: e["name"] for e in schema["entities"]}
    chunks = {}
    for khex, vhex in trees.get("history/changes", []):
        key = bytes.fromhex(khex)
        if len(key) != 12:
            fail("history/changes: a key of %d bytes" % len(key))
        generation, chunk = struct.unpack(">QI", key)
        chunks.setdefault(generation, []).append((chunk, bytes.fromhex(vhex)))
    transactions = []
    for khex, vhex in trees.get("history/transactions", []):
        generation = struct.unpack(">Q", bytes.fromhex(khex))[0]
        buf = bytes.fromhex(vhex)
        what = "history transaction %d" % generation
        if buf[0] not in (1, 2):
            fail("%s: format %d" % (what, buf[0]))
        first, pos = varint_decode(buf, 1)
        count, pos = varint_decode(buf, pos)
        timestamp = struct.unpack_from("<d", buf, pos)[0]
        pos += 8
        author, pos = _optional_text(buf, pos, what)
        context, pos = _optional_text(buf, pos, what)
        bundle, pos = _optional_text(buf, pos, what)
        process, pos = _optional_text(buf, pos, what)
        if buf[0] == 2:
            # Version 2: the change records follow the texts, to the end of the record.
            data = buf[pos:]
            if generation in chunks:
                fail("%s: changes inside the record and in chunks" % what)
        else:
            parts = sorted(chunks.get(generation, []))
            if [c for c, _ in parts] != list(range(len(parts))):
                fail("%s: change chunks are not numbered 0, 1, ..." % what)
            data = b"".join(v for _, v in parts)
        changes = []
        pos = 0
        while pos < len(data):
            kind = data[pos]
            pos += 1
            entity, pos = varint_decode(data, pos)
            key, pos = varint_decode(data, pos)
            change = {"changeID": first + len(changes), "type": ["insert", "update", "delete"][kind],
                      "entity": entities.get(entity, entity), "primaryKey": key}
            if kind == 1:
                n, pos = varint_decode(data, pos)
                names = []
                for _ in range(n):
                    name, pos = _text(data, pos, what)
                    names.append(name)
                change["updatedProperties"] = names
            elif kind == 2:
                n, pos = varint_decode(data, pos)
                tombstone = {}
                for _ in range(n):
                    name, pos = _text(data, pos, what)
                    tombstone[name], pos = _tagged_value(data, pos, what)
                change["tombstone"] = tombstone
            changes.append(change)
        if len(changes) != count:
            fail("%s: %d changes recorded, %d found" % (what, count, len(changes)))
        transactions.append({"generation": generation, "timestamp": timestamp, "author": author,
                             "contextName": context, "bundleID": bundle, "processID": process,
                             "changes": changes})
    return transactions



# --------------------------------------------------------------------------- #
# The .binary store file (FORMAT.md section 20)                               #
# --------------------------------------------------------------------------- #

def _finite(x):
    """A float as JSON can carry it: non-finite values as text."""
    if x != x:
        return "nan"
    if x in (float("inf"), float("-inf")):
        return "inf" if x > 0 else "-inf"
    return x


def _zigzag(buf, pos, end):
    raw, pos = varint_decode(buf, pos, end)
    return (raw >> 1) ^ -(raw & 1), pos


def _binary_text(buf, pos, end, what):
    n, pos = varint_decode(buf, pos, end)
    if pos + n > end:
        fail("%s: text of %d bytes runs past the body" % (what, n))
    return buf[pos:pos + n].decode("utf-8"), pos + n


def _binary_value(buf, pos, end, entities, what, metadata=False):
    if pos >= end:
        fail("%s: the body ends inside a value" % what)
    tag = buf[pos]
    pos += 1
    if tag == 0x00:
        return None, pos
    if tag == 0x01:
        return _zigzag(buf, pos, end)
    if tag in (0x02, 0x08):
        return _finite(struct.unpack_from("<d", buf, pos)[0]), pos + 8
    if tag == 0x03:
        return _finite(struct.unpack_from("<f", buf, pos)[0]), pos + 4
    if tag in (0x04, 0x05, 0x0B):
        return _binary_text(buf, pos, end, what)
    if tag in (0x06, 0x07):
        return tag == 0x07, pos
    if tag == 0x09:
        n, pos = varint_decode(buf, pos, end)
        return buf[pos:pos + n].hex(), pos + n
    if tag == 0x0A:
        return buf[pos:pos + 16].hex(), pos + 16
    if tag == 0x0C and not metadata:
        position, pos = varint_decode(buf, pos, end)
        key, pos = _zigzag(buf, pos, end)
        return [entities[position], key], pos
    if tag == 0x0D and not metadata:
        n, pos = varint_decode(buf, pos, end)
        refs = []
        for _ in range(n):
            position, pos = varint_decode(buf, pos, end)
            key, pos = _zigzag(buf, pos, end)
            refs.append([entities[position], key])
        return refs, pos
    if tag == 0x10 and metadata:
        n, pos = varint_decode(buf, pos, end)
        items = []
        for _ in range(n):
            item, pos = _binary_value(buf, pos, end, entities, what, True)
            items.append(item)
        return items, pos
    if tag == 0x11 and metadata:
        n, pos = varint_decode(buf, pos, end)
        items = {}
        for _ in range(n):
            key, pos = _binary_text(buf, pos, end, what)
            items[key], pos = _binary_value(buf, pos, end, entities, what, True)
        return items, pos
    fail("%s: unexpected value tag 0x%02x" % (what, tag))


def read_binary(path):
    """Every row of a .binary store file, with its schema and metadata."""
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 28:
        fail("the file has %d bytes, fewer than the 28-byte header" % len(buf))
    if buf[0:8] != b"STRATABN":
        fail("not a .binary store (magic %r)" % buf[0:8])
    version, length, body_sum, header_sum = struct.unpack_from("<IQII", buf, 8)
    if version != 1:
        fail("format version %d" % version)
    if checksum(buf[0:24]) != header_sum:
        fail("header checksum")
    if length != len(buf) - 28:
        fail("body length %d, file has %d bytes after the header" % (length, len(buf) - 28))
    if checksum(buf[28:]) != body_sum:
        fail("body checksum")
    pos, end = 28, len(buf)
    n, pos = varint_decode(buf, pos, end)
    metadata = {}
    for _ in range(n):
        key, pos = _binary_text(buf, pos, end, "metadata key")
        metadata[key], pos = _binary_value(buf, pos, end, [], "metadata " + key, True)
    next_key, pos = _zigzag(buf, pos, end)
    n, pos = varint_decode(buf, pos, end)
    schema = []
    for _ in range(n):
        name, pos = _binary_text(buf, pos, end, "entity name")
        count, pos = varint_decode(buf, pos, end)
        properties = []
        for _ in range(count):
            pname, pos = _binary_text(buf, pos, end, "property name")
            kind, pos = _binary_text(buf, pos, end, "property kind")
            destination = None
            if kind in ("toOne", "toMany", "orderedToMany"):
                destination, pos = _binary_text(buf, pos, end, "destination")
            properties.append([pname, kind, destination])
        schema.append({"name": name, "properties": properties})
    names = [e["name"] for e in schema]
    for entity in schema:
        count, pos = varint_decode(buf, pos, end)
        rows = []
        previous = None
        for _ in range(count):
            key, pos = _zigzag(buf, pos, end)
            if previous is not None and key <= previous:
                fail("%s: row %d after row %d" % (entity["name"], key, previous))
            previous = key
            version, pos = _zigzag(buf, pos, end)
            values = []
            for prop in entity["properties"]:
                value, pos = _binary_value(buf, pos, end, names, "%s.%s" % (entity["name"], prop[0]))
                values.append(value)
            rows.append([key, version, values])
        entity["rows"] = rows
    if pos != end:
        fail("%d bytes after the last row" % (end - pos))
    return {"metadata": metadata, "nextKey": next_key, "entities": schema}

def main(argv):
    global VERBOSE
    args = list(argv[1:])
    if "--selftest" in args:
        return selftest()
    check_space = False
    if "-v" in args:
        VERBOSE = True
        args.remove("-v")
    if "--check-space" in args:
        check_space = True
        args.remove("--check-space")
    if "--binary" in args:
        args.remove("--binary")
        try:
            result = read_binary(args[0])
        except FormatError as e:
            sys.stderr.write("strata_reader: invalid .binary store: %s\n" % e)
            return 1
        sys.stdout.write(json.dumps(result, sort_keys=True, separators=(",", ":")))
        sys.stdout.write("\n")
        return 0
    history = False
    if "--history" in args:
        history = True
        args.remove("--history")
    if len(args) != 1 or args[0].startswith("-"):
        sys.stderr.write("usage: strata_reader.py [-v] [--check-space] [--history] PATH | "
                         "--binary PATH | --selftest\n")
        return 2
    try:
        store = Store(args[0])
        result = store.read_all()
        if history:
            result = read_history(result)
        if check_space:
            store.check_space()
        if VERBOSE:
            store.compare_shm()
    except FormatError as e:
        sys.stderr.write("strata_reader: invalid store: %s\n" % e)
        return 1
    except (struct.error, IndexError, ValueError) as e:
        sys.stderr.write("strata_reader: invalid store: malformed data (%s)\n" % e)
        return 1
    sys.stdout.write(json.dumps(result, sort_keys=True, separators=(",", ":")))
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
