#!/usr/bin/env python3
"""Disk-tier observer for Tests/Benchmarks/soak.sh (issue 33): records every create, write,
rename and delete in a thumbd cache directory's `tmp/` and `entries/<shard>/` with inotify
(ctypes on libc, no package), then replays them in the kernel's order and reports the most bytes
the disk tier ever held.

Accounting rule, the server's own (DiskCache.blocks, docs/cache.md "Disk"): each regular file
under `entries/<shard>/` and `tmp/` counts its size (st_size) rounded up to 4 KiB; directories,
CACHEDIR.TAG and index.sqlite* are not counted. As Tests/ThumbnailsTests/DiskCacheLimitTests.swift
does, a file counts at its *full* size from the moment it is created (the cache reserves that
size before it creates the temporary file), not only from its last write's close: a file is
followed from its creation in tmp/ through its rename into entries/ (rename cookie) to its
deletion, and its size is the largest any stat of it showed (taken when its create, write, close
or rename event is read; entries are never written in place). The bytes by `st_blocks` (what du
shows) are kept too, for information.

Shard directories made after the watch started are watched when their IN_CREATE is read and
listed at once; a file found by that listing is counted from the listing's place in the event
stream (a rename seen later to the same name is the same file). soak.sh makes the 256 shards
before any write, as the Swift test does, so no file should be seen only by such a listing: the
report counts them (`found_by_listing`).

Usage: soak_observer.py CACHE_DIR EVENTS_FILE RESULT_JSON READY_FILE
Runs until SIGTERM, then replays and writes RESULT_JSON.
"""
import ctypes
import ctypes.util
import json
import os
import select
import signal
import struct
import sys
import time

IN_MODIFY, IN_CLOSE_WRITE = 0x2, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR, IN_ONLYDIR = 0x4000, 0x8000, 0x40000000, 0x01000000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
FILE_MASK = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY \
    | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
BLOCK = 4096


def cost(size):
    """The server's rule: the size rounded up to 4 KiB blocks."""
    return (size + BLOCK - 1) // BLOCK * BLOCK


class Observer:
    def __init__(self, root, events_path):
        self.root = root.rstrip("/")
        self.libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self.fd = self.libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.watches = {}          # wd -> directory relative to root ("tmp", "entries", "entries/ab")
        self.out = open(events_path, "w", buffering=1 << 20)
        self.seq = 0
        self.overflowed = False
        self.lost_directories = []  # tmp/ or a shard removed or moved while watched
        self.found_by_listing = 0
        self.t0 = time.monotonic()

    def watch(self, rel):
        wd = self.libc.inotify_add_watch(self.fd, (self.root + "/" + rel).encode(), FILE_MASK)
        if wd < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch " + rel)
        self.watches[wd] = rel
        return wd

    def stat(self, rel):
        try:
            st = os.lstat(self.root + "/" + rel)
        except OSError:
            return "-", "-", "-"
        if (st.st_mode & 0o170000) != 0o100000:
            return "-", "-", "-"
        return st.st_size, st.st_blocks * 512, st.st_ino

    def record(self, kind, rel, cookie=0, with_stat=False):
        size, blocks, ino = self.stat(rel) if with_stat else ("-", "-", "-")
        t = time.monotonic() - self.t0
        self.out.write(f"{kind} {t:.4f} {cookie} {size} {blocks} {ino} {rel}\n")
        self.seq += 1

    def watch_shard(self, rel, listing):
        self.watch(rel)
        if listing:
            for name in sorted(os.listdir(self.root + "/" + rel)):
                self.found_by_listing += 1
                self.record("S", rel + "/" + name, with_stat=True)

    def start(self):
        self.watch("tmp")
        self.watch("entries")
        for name in sorted(os.listdir(self.root + "/entries")):
            if os.path.isdir(self.root + "/entries/" + name):
                self.watch_shard("entries/" + name, listing=False)
        # Files already there when watching started (none on a fresh cache): counted from here.
        for rel in ["tmp"] + ["entries/" + n for n in sorted(os.listdir(self.root + "/entries"))]:
            if os.path.isdir(self.root + "/" + rel):
                for name in sorted(os.listdir(self.root + "/" + rel)):
                    if not os.path.isdir(self.root + "/" + rel + "/" + name):
                        self.record("S", rel + "/" + name, with_stat=True)

    def drain(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return
        while True:
            try:
                data = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                return
            offset = 0
            while offset + 16 <= len(data):
                wd, mask, cookie, length = struct.unpack_from("iIII", data, offset)
                name = data[offset + 16: offset + 16 + length].split(b"\0", 1)[0].decode("utf-8", "replace")
                offset += 16 + length
                self.handle(wd, mask, cookie, name)

    def handle(self, wd, mask, cookie, name):
        if mask & IN_Q_OVERFLOW:
            self.overflowed = True
            return
        directory = self.watches.get(wd)
        if directory is None:
            return
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
            self.lost_directories.append(directory)
            return
        if mask & IN_IGNORED:
            return
        rel = directory + "/" + name
        if mask & IN_ISDIR:
            if directory == "entries" and mask & (IN_CREATE | IN_MOVED_TO):
                self.watch_shard(rel, listing=True)
            return
        if directory == "entries":
            return   # a file beside the shards is no entry of the cache's form
        if mask & IN_CREATE:
            self.record("C", rel, with_stat=True)
        elif mask & (IN_MODIFY | IN_CLOSE_WRITE):
            self.record("W", rel, with_stat=True)
        elif mask & IN_DELETE:
            self.record("D", rel)
        elif mask & IN_MOVED_FROM:
            self.record("F", rel, cookie)
        elif mask & IN_MOVED_TO:
            self.record("T", rel, cookie, with_stat=True)

    def close(self):
        self.out.close()
        os.close(self.fd)


class File:
    __slots__ = ("size", "blocks", "ino", "forced_zero")

    def __init__(self):
        self.size, self.blocks, self.ino, self.forced_zero = 0, 0, None, False

    def learn(self, size, blocks, ino):
        if size == "-":
            return
        ino = int(ino)
        if self.ino is not None and ino != self.ino:
            return   # another file now at that name (its stat came late): not this one's size
        self.ino = ino
        self.size = max(self.size, int(size))
        self.blocks = max(self.blocks, int(blocks))


def replay(events_path, root):
    """Two passes over the recorded events: the first follows each file from its creation to its
    deletion and learns its size; the second adds and subtracts those sizes in order."""
    lines = open(events_path).read().splitlines()
    moved_to_cookies = set()
    for line in lines:
        if line.startswith("T "):
            moved_to_cookies.add(line.split(" ", 3)[2])
    files = []
    ops = []           # (time, +1/-1, file index)
    at = {}            # relative path -> file index
    moving = {}        # cookie -> file index
    unexpected = []
    unknown_deletes = renamed_out_of_sight = created_in_entries = 0
    for line in lines:
        kind, t, cookie, size, blocks, ino, rel = line.split(" ", 6)
        t = float(t)
        if kind in ("C", "S"):
            if kind == "C" and not rel.startswith("tmp/"):
                created_in_entries += 1
            if rel in at:   # a second create at a name we hold: the old one must have gone unseen
                unexpected.append(f"{rel} created again before its deletion was seen")
                ops.append((t, -1, at.pop(rel)))
            f = File()
            f.learn(size, blocks, ino)
            files.append(f)
            at[rel] = len(files) - 1
            ops.append((t, 1, at[rel]))
        elif kind == "W":
            if rel in at:
                files[at[rel]].learn(size, blocks, ino)
        elif kind == "D":
            if rel in at:
                ops.append((t, -1, at.pop(rel)))
            else:
                unknown_deletes += 1
        elif kind == "F":
            if rel not in at:
                continue
            i = at.pop(rel)
            if cookie in moved_to_cookies:
                moving[cookie] = i
            else:
                # Renamed to a directory not watched (yet): out of sight from here.
                renamed_out_of_sight += 1
                ops.append((t, -1, i))
        elif kind == "T":
            i = moving.pop(cookie, None)
            if i is None:
                f = File()   # renamed in from outside the watched directories
                files.append(f)
                i = len(files) - 1
                ops.append((t, 1, i))
            files[i].learn(size, blocks, ino)
            if rel in at:
                j = at[rel]
                same = files[j].ino is None or files[i].ino is None or files[j].ino == files[i].ino
                if same:
                    # A file a shard's listing found, then its rename read: one file, counted
                    # from the listing (earlier); this record of it counts nothing.
                    files[j].learn(size, blocks, ino)
                    files[i].forced_zero = True
                    ops.append((t, -1, i))
                    continue
                ops.append((t, -1, at.pop(rel)))   # renamed over
            at[rel] = i
    total = total_blocks = peak = peak_blocks = 0
    peak_t = 0.0
    per_second = {}
    unsized = sum(1 for f in files if f.size == 0 and not f.forced_zero and f.ino is None)
    for t, sign, i in ops:
        f = files[i]
        if f.forced_zero:
            continue
        total += sign * cost(f.size)
        total_blocks += sign * f.blocks
        if total > peak:
            peak, peak_t = total, t
        peak_blocks = max(peak_blocks, total_blocks)
        s = int(t)
        per_second[s] = max(per_second.get(s, 0), total)
    # Where the directories are now, by the same rule, to check that the replay kept track.
    walk = walk_blocks = 0
    on_disk = {}
    for rel in ["tmp"] + ["entries/" + n for n in os.listdir(root + "/entries")]:
        d = root + "/" + rel
        if not os.path.isdir(d) or os.path.islink(d):
            continue
        for name in os.listdir(d):
            try:
                st = os.lstat(d + "/" + name)
            except OSError:
                continue
            if (st.st_mode & 0o170000) == 0o100000:
                on_disk[rel + "/" + name] = cost(st.st_size)
                walk += cost(st.st_size)
                walk_blocks += st.st_blocks * 512
    # Where the replay and the walk differ (the first few): path, replayed bytes, walked bytes.
    differ = [(p, cost(files[at[p]].size) if p in at else None, on_disk.get(p))
              for p in sorted(set(at) | set(on_disk))
              if (cost(files[at[p]].size) if p in at else None) != on_disk.get(p)]
    return {
        "differ": differ[:5], "differ_count": len(differ),
        "events": len(lines), "files": len(files), "peak_bytes": peak, "peak_at_s": round(peak_t, 1),
        "peak_st_blocks_bytes": peak_blocks, "final_bytes": total, "final_st_blocks_bytes": total_blocks,
        "walk_bytes": walk, "walk_st_blocks_bytes": walk_blocks, "unsized_files": unsized,
        "unknown_deletes": unknown_deletes, "renamed_out_of_sight": renamed_out_of_sight,
        "created_in_entries": created_in_entries, "unexpected": unexpected[:5],
        "per_second_max": [per_second.get(s, None) for s in range(max(per_second, default=-1) + 1)],
    }


def main():
    root, events_path, result_path, ready_path = sys.argv[1:5]
    observer = Observer(root, events_path)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))
    observer.start()
    open(ready_path, "w").write(str(os.getpid()))
    while not stopping:
        observer.drain(0.2)
    observer.drain(0)   # what was queued before the stop
    observer.close()
    result = replay(events_path, root)
    result.update(overflowed=observer.overflowed, lost_directories=observer.lost_directories,
                  found_by_listing=observer.found_by_listing)
    with open(result_path + ".part", "w") as f:
        json.dump(result, f)
    os.rename(result_path + ".part", result_path)


if __name__ == "__main__":
    main()
