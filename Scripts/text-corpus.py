#!/usr/bin/env python3
"""Writes a full-text search corpus for STRATA_TEXT_CORPUS (TextSearchCorpusTests): one JSON
object per line with "name", "title" and "description", one per package of this machine's
Debian package lists (/var/lib/apt/lists/*_Packages, plain or lz4). The corpus stays out of the
repository.

    python3 Scripts/text-corpus.py /work/corpora/debian/packages.jsonl
"""
import glob
import json
import subprocess
import sys


def package_lists():
    for path in sorted(glob.glob("/var/lib/apt/lists/*_Packages*")):
        if path.endswith(".lz4"):
            yield subprocess.run(["lz4", "-dc", path], check=True, capture_output=True).stdout.decode("utf-8", "replace")
        elif not path.endswith((".gz", ".xz", ".diff_Index")):
            with open(path, encoding="utf-8", errors="replace") as f:
                yield f.read()


def documents(text):
    current, in_description = {}, False
    for line in text.splitlines():
        if not line.strip():
            if "title" in current:
                yield current
            current, in_description = {}, False
        elif line.startswith(" ") and in_description:
            current["description"] += ("\n" if current["description"] else "") + line.strip()
        else:
            key, _, value = line.partition(":")
            in_description = key == "Description"
            if key == "Package":
                current["name"] = value.strip()
            elif in_description:
                current["title"], current["description"] = value.strip(), ""
    if "title" in current:
        yield current


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: text-corpus.py OUTPUT.jsonl")
    count = 0
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        for text in package_lists():
            for document in documents(text):
                out.write(json.dumps(document, ensure_ascii=False) + "\n")
                count += 1
    print("%d documents in %s" % (count, sys.argv[1]))


if __name__ == "__main__":
    main()
