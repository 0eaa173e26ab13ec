#!/usr/bin/env python3
"""The soak's load and its judge (Tests/Benchmarks/soak.sh starts the server and runs this).

Drives DURATION seconds of two wrk processes (the mixes in soak.lua) with side clients beside them,
samples the server every second, and judges it against its limits; prints one table (measured
against each limit) and exits 1 naming every limit crossed. Python 3 standard library only.

The limits (each row of the table):
  disk tier        the most bytes entries/ and tmp/ ever held, by the server's own rule (each file's
                   st_size rounded up to 4 KiB, from its creation to its deletion), replayed from
                   every inotify event (soak_observer.py) <= disk_cache_bytes; and /stats
                   disk_cache.bytes <= its limit at every sample
  memory tier      /stats memory_cache.bytes <= memory_cache.limit_bytes at every sample; memfds
                   (links to "/memfd:" in /proc/PID/fd) <= descriptors.max_memory_files, and <=
                   memory_cache.entries + connections.open (an evicted entry's memfd lives on only
                   while a response still sends it, one per connection at most; /stats read just
                   before and after the count, the larger of each taken)
  resident memory  median VmRSS of the last quarter <= (1 + RSS_GROWTH) x median of the second
                   quarter (medians: a single spike neither hides nor fakes growth)
  descriptors      descriptors other than memfds (those follow the memory tier, judged above):
                   max of the last quarter <= max of the second quarter + FD_SLACK (32, an eighth
                   of wrk's connections: the server closes one after an error answer and wrk
                   opens another; side clients come and go)
  threads          max Threads: of the last quarter <= max of the second quarter + THREAD_SLACK (4:
                   libvips' worker pool and libdispatch's threads are made on demand; a thread per
                   request, render or connection would pass it within a quarter)
  5xx              no 5xx but a 503 with a documented code (docs/API.md "Errors": overloaded,
                   render_timeout, index_building, source_changed, out_of_descriptors) seen by
                   wrk or a side client, and none but 503 in /stats requests.by_status
  stale            a photo replaced in the library (renamed into place: other pixels, another
                   shape) answers, on the very next request, exactly the bytes the same server
                   rendered at the start from a copy of the new photo, and not the old ones; a
                   renamed photo's old path and a deleted photo's path answer 404 at once
  observer         the inotify queue never overflowed, no watched directory vanished, and the
                   replay ends where a walk of the directories does (else the judge is blind)
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

DOCUMENTED_503 = {"overloaded", "render_timeout", "index_building", "source_changed", "out_of_descriptors"}


def fetch(port, path, method="GET", headers=None, body=None, timeout=60):
    """(status, headers dict lower-cased, body bytes); status 0 on a connection failure."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    except (OSError, http.client.HTTPException) as e:
        return 0, {}, str(e).encode()
    finally:
        conn.close()


def error_code(body):
    m = re.search(rb'"error"\s*:\s*"([a-z_]+)"', body or b"")
    return m.group(1).decode() if m else "?"


def jpeg_size(data):
    """(width, height) from a JPEG's SOF marker, or None."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        length = int.from_bytes(data[i + 2:i + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        i += 2 + length
    return None


class Soak:
    def __init__(self, a):
        self.a = a
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.samples = []            # dicts, one per second
        self.fivexx = {}             # "status code" -> count, side clients
        self.side_statuses = {}
        self.side = {"requests": 0, "gone_away": 0, "paging_walks": 0, "paging_repeats": 0,
                     "video_requests": 0, "video_ok": 0}
        self.changes = {"replaced": 0, "renamed": 0, "deleted": 0, "checks": 0, "inconclusive": 0}
        self.stale = []              # what went wrong, one sentence each
        self.refs = {}               # photo name -> (bytes, (w, h))

    # -- side clients -------------------------------------------------------------------------
    def get(self, path, method="GET", headers=None, body=None):
        status, h, b = fetch(self.a.port, path, method, headers, body)
        with self.lock:
            self.side["requests"] += 1
            self.side_statuses[status] = self.side_statuses.get(status, 0) + 1
            if status >= 500:
                key = f"{status} {error_code(b)}"
                self.fivexx[key] = self.fivexx.get(key, 0) + 1
        return status, h, b

    def get_retrying(self, path):
        """GET, retried on a documented 503 (with its Retry-After) for up to 45 s: a render
        that outlived render_timeout_seconds (30) is asked again once."""
        deadline = time.monotonic() + 45
        while True:
            status, h, b = self.get(path)
            if status != 503 or error_code(b) not in DOCUMENTED_503 or time.monotonic() > deadline:
                return status, h, b
            time.sleep(min(float(h.get("retry-after", "1")), 1.0))

    def gone_away_loop(self):
        """Clients that send a request and close at once, or after a few ms (the server counts
        499), once a second: every other one a miss, the others a hot thumbnail (whose answer
        is on its way when the client goes)."""
        rng = random.Random(1)
        k = 0
        while not self.stop.wait(1.0):
            k += 1
            path = ("/thumbnails/%s/s%04d.jpg%s" % (rng.choice("135"), rng.randrange(20, 2000),
                                                    rng.choice(["", "?format=webp"]))
                    if k % 2 else "/thumbnails/5/s%04d.jpg" % rng.randrange(20))
            try:
                s = socket.create_connection(("127.0.0.1", self.a.port), timeout=5)
                s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                if rng.random() < 0.5:
                    time.sleep(0.005)
                s.close()
                with self.lock:
                    self.side["gone_away"] += 1
            except OSError:
                pass

    def paging_loop(self):
        """Cursor paging through the whole listing, counting items a walk showed twice (info: a
        photo the change loop replaced takes the new photo's date, so it may move down the
        listing past the walk's cursor and legitimately show again)."""
        while not self.stop.wait(1.0):
            seen, after, pages = set(), None, 0
            while not self.stop.is_set() and pages < 100:
                q = "/assets?sort=newest&limit=250" + (f"&after={after}" if after else "")
                status, _, b = self.get(q)
                if status != 200:
                    break
                d = json.loads(b)
                for item in d["items"]:
                    if item["path"] in seen:
                        with self.lock:
                            self.side["paging_repeats"] += 1
                    seen.add(item["path"])
                pages += 1
                after = d.get("next")
                if not after:
                    with self.lock:
                        self.side["paging_walks"] += 1
                    break

    def video_loop(self):
        videos = self.a.videos
        if not videos:
            return
        rng = random.Random(2)
        while not self.stop.wait(2.0):
            status, _, _ = self.get("/thumbnails/%s/%s" % (rng.choice("135"), rng.choice(videos)))
            with self.lock:
                self.side["video_requests"] += 1
                self.side["video_ok"] += status == 200

    # -- photos changed during the run --------------------------------------------------------
    def load_references(self):
        """Each change photo's grid-1 thumbnail, rendered by this server from a copy under ref/:
        what a changed photo must show (renders are deterministic: same source, same bytes)."""
        for name in self.a.change_photos:
            status, _, b = self.get_retrying(f"/thumbnails/1/ref/{name}")
            if status != 200:
                sys.exit(f"soak: the reference thumbnail of ref/{name} answered {status}")
            self.refs[name] = (b, jpeg_size(b))

    def place(self, photo, path):
        """Puts a fresh copy of corpus photo `photo` at library path `path` by a rename."""
        if self.a.fake_stale and os.path.exists(os.path.join(self.a.library, path)):
            return   # --fake-stale: the change is not made, so the check must see the old picture
        stage = os.path.join(self.a.work, "stage.jpg")
        shutil.copyfile(os.path.join(self.a.corpus, "photos", photo), stage)
        os.rename(stage, os.path.join(self.a.library, path))

    def check(self, path, photo, what):
        """The grid-1 thumbnail of `path` must be the reference of `photo`."""
        status, _, b = self.get_retrying(f"/thumbnails/1/{path}")
        with self.lock:
            self.changes["checks"] += 1
        if status == 503:
            with self.lock:
                self.changes["inconclusive"] += 1
            return
        want, size = self.refs[photo]
        if status != 200:
            self.stale.append(f"{what}: {path} answered {status}, expected the thumbnail of {photo}")
        elif b != want:
            was = [n for n, (rb, _) in self.refs.items() if rb == b]
            self.stale.append(f"{what}: {path} answered {jpeg_size(b)} "
                              + (f"= the thumbnail of {was[0]} (stale)" if was else "bytes of no reference")
                              + f", expected {photo}'s {size}")

    def check_gone(self, path, what):
        status, _, _ = self.get_retrying(f"/thumbnails/1/{path}")
        with self.lock:
            self.changes["checks"] += 1
        if status != 404:
            self.stale.append(f"{what}: {path} answered {status}, expected 404")

    def change_loop(self):
        rng = random.Random(3)
        photos = self.a.change_photos
        files = {}   # library path -> photo it holds now
        for i in range(12):
            path, photo = f"changing/c{i:02d}.jpg", photos[i % len(photos)]
            files[path] = photo
        n = 100
        # One of each change first (a short or starved run still tries each), then 60% replaced,
        # 20% renamed, 20% deleted (and another photo added).
        first = [0.0, 0.7, 0.9]
        while not self.stop.wait(self.a.change_interval):
            path = rng.choice(sorted(files))
            photo = files[path]
            self.check(path, photo, "before a change")   # now cached (memory, disk)
            op = first.pop(0) if first else rng.random()
            if op < 0.6:
                # Replace with another photo whose thumbnail has other dimensions and bytes.
                other = rng.choice([p for p in photos if self.refs[p][1] != self.refs[photo][1]])
                self.place(other, path)
                files[path] = other
                with self.lock:
                    self.changes["replaced"] += 1
                self.check(path, other, f"replaced {photo} by {other}")
            elif op < 0.8:
                new = f"changing/r{n:03d}.jpg"
                n += 1
                if self.a.fake_stale:   # the old path stays, and the new one is not there
                    os.link(os.path.join(self.a.library, path), os.path.join(self.a.library, new))
                else:
                    os.rename(os.path.join(self.a.library, path), os.path.join(self.a.library, new))
                del files[path]
                files[new] = photo
                with self.lock:
                    self.changes["renamed"] += 1
                self.check_gone(path, f"renamed to {new}")
                self.check(new, photo, f"renamed from {path}")
            else:
                if not self.a.fake_stale:
                    os.unlink(os.path.join(self.a.library, path))
                del files[path]
                with self.lock:
                    self.changes["deleted"] += 1
                self.check_gone(path, "deleted")
                # A new photo appears under a new name, so the set keeps its size.
                new, other = f"changing/n{n:03d}.jpg", rng.choice(photos)
                n += 1
                self.place(other, new)
                files[new] = other
                self.check(new, other, "added")

    # -- sampling ------------------------------------------------------------------------------
    def proc(self):
        pid = self.a.pid
        status = open(f"/proc/{pid}/status").read()
        rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) * 1024
        threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))
        fds = memfds = 0
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            fds += 1
            memfds += link.startswith("/memfd:")
        return rss, threads, fds, memfds

    def stats(self):
        status, _, b = fetch(self.a.port, "/stats", timeout=30)
        return json.loads(b) if status == 200 else None

    def sample_loop(self, t0):
        while not self.stop.is_set():
            before = self.stats()
            try:
                rss, threads, fds, memfds = self.proc()
            except OSError:
                self.samples.append({"t": time.monotonic() - t0, "dead": True})
                return
            after = self.stats()
            if before and after:
                s = {"t": time.monotonic() - t0, "rss": rss, "threads": threads, "fds": fds, "memfds": memfds,
                     "mem_bytes": max(before["memory_cache"]["bytes"], after["memory_cache"]["bytes"]),
                     "mem_limit": after["memory_cache"]["limit_bytes"],
                     "mem_entries": max(before["memory_cache"]["entries"], after["memory_cache"]["entries"]),
                     "open": max(before["connections"]["open"], after["connections"]["open"]),
                     "max_memfds": after["descriptors"]["max_memory_files"],
                     "disk_bytes": max(before["disk_cache"]["bytes"], after["disk_cache"]["bytes"]),
                     "disk_limit": after["disk_cache"]["limit_bytes"]}
                self.samples.append(s)
            self.stop.wait(max(0.0, 1.0 - (time.monotonic() - t0) % 1.0))

    # -- the run -------------------------------------------------------------------------------
    def run(self):
        a = self.a
        self.load_references()
        t0 = time.monotonic()
        threads = [threading.Thread(target=f, daemon=True) for f in
                   (self.gone_away_loop, self.paging_loop, self.video_loop, self.change_loop)]
        sampler = threading.Thread(target=self.sample_loop, args=(t0,), daemon=True)
        sampler.start()
        for t in threads:
            t.start()
        # Two wrk processes (soak.lua): the front mix (hits, 304s, WebP, bad requests, pages) on
        # most connections, the back mix (misses, prefetch starts and stops) on a few.
        procs = {}
        for mix, conns in (("front", a.connections - a.back_connections), ("back", a.back_connections)):
            env = dict(os.environ, SOAK_WRK_OUT=os.path.join(a.work, f"wrk-{mix}.json"))
            procs[mix] = subprocess.Popen(
                ["wrk", "-t1", f"-c{conns}", f"-d{a.duration}s", "--timeout", "30s", "-s", a.lua,
                 f"http://127.0.0.1:{a.port}", "--", mix] + a.etags,
                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        outputs = {mix: p_.communicate()[0] for mix, p_ in procs.items()}
        self.stop.set()
        for t in threads:
            t.join(30)
        sampler.join(5)
        self.wrk = {"requests": 0, "statuses": {}, "fivexx": {}, "errors": {}, "by_mix": {}}
        for mix, out in outputs.items():
            open(os.path.join(a.work, f"wrk-{mix}.txt"), "w").write(out)
            try:
                w = json.load(open(os.path.join(a.work, f"wrk-{mix}.json")))
            except (OSError, ValueError):
                print(out)
                sys.exit(f"soak: wrk ({mix}) left no summary")
            self.wrk["by_mix"][mix] = w["requests"]
            self.wrk["requests"] += w["requests"]
            for key in ("statuses", "fivexx", "errors"):
                for k, v in w[key].items():
                    self.wrk[key][k] = self.wrk[key].get(k, 0) + v
        # Idle: every prefetch job stopped, and no render or write under way (up to 20 s).
        for client in range(1, 9):
            fetch(a.port, "/prefetch", "DELETE", {"Thumbd-Client-Id": f"soak-{client}"})
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            st = self.stats()
            if st and st["renders"]["in_flight"] == 0 and st["renders"]["queued"] == 0 \
                    and st["prefetch"]["queued"] == 0 and st["renders"]["flights"] == 0:
                break
            time.sleep(0.5)
        time.sleep(1)
        self.final = self.stats()
        # The server stopped (SIGSTOP) while the observer reads its last events and walks the
        # directories, so that a write still under way (a render that outlived its clients)
        # cannot land between the two and make them differ.
        os.kill(a.pid, signal.SIGSTOP)
        try:
            os.kill(a.observer_pid, signal.SIGTERM)
            result = os.path.join(a.work, "observer.json")
            deadline = time.monotonic() + 120
            while not os.path.exists(result) and time.monotonic() < deadline:
                time.sleep(0.2)
            self.observer = json.load(open(result)) if os.path.exists(result) else None
        finally:
            os.kill(a.pid, signal.SIGCONT)
        if a.samples_out:
            json.dump({"samples": self.samples, "observer": self.observer, "final": self.final}, open(a.samples_out, "w"))
        return self.judge()

    # -- the judge -----------------------------------------------------------------------------
    def judge(self):
        a, rows, crossed = self.a, [], []

        def row(name, measured, limit, ok, rule):
            rows.append((name, measured, limit, "yes" if ok else "NO"))
            if not ok:
                crossed.append(f"{name}: {measured} (limit {limit}; {rule})")

        mib = lambda n: f"{n / 1048576:.2f} MiB"
        s = [x for x in self.samples if "rss" in x]
        dead = any(x.get("dead") for x in self.samples)
        disk_limit = a.fake_disk_limit or (s[-1]["disk_limit"] if s else 0)
        mem_limit = a.fake_memory_limit or (s[-1]["mem_limit"] if s else 0)

        o = self.observer
        if o is None:
            row("observer", "no result", "a replay", False, "the inotify observer did not report")
        else:
            row("disk tier, bytes on disk (inotify replay, peak)", f"{o['peak_bytes']} B ({mib(o['peak_bytes'])}) at {o['peak_at_s']} s",
                f"{disk_limit} B", o["peak_bytes"] <= disk_limit, "st_size rounded up to 4 KiB, entries/ and tmp/")
            blind = o["overflowed"] or o["lost_directories"] or o["walk_bytes"] != o["final_bytes"] \
                or o["unsized_files"] or o["renamed_out_of_sight"] or o["unexpected"]
            row("observer kept track (events, replay end = walk)",
                f"{o['events']} events, {o['files']} files; end {o['final_bytes']} B, walk {o['walk_bytes']} B; "
                f"overflow {o['overflowed']}, unsized {o['unsized_files']}, out of sight {o['renamed_out_of_sight']}",
                "no overflow, end = walk, 0 unsized", not blind, "the judge saw every file")
        if s:
            peak_disk = max(x["disk_bytes"] for x in s)
            row("disk tier, /stats disk_cache.bytes (max of samples)", f"{peak_disk} B", f"{disk_limit} B",
                peak_disk <= disk_limit, "the server's own count")
            peak_mem = max(x["mem_bytes"] for x in s)
            row("memory tier, /stats memory_cache.bytes (max)", f"{peak_mem} B ({mib(peak_mem)})", f"{mem_limit} B",
                peak_mem <= mem_limit, "memory_cache.limit_bytes")
            memfd_bound = lambda x: min(x["max_memfds"], x["mem_entries"] + x["open"]) + a.memfd_slack
            worst = max(s, key=lambda x: x["memfds"] - memfd_bound(x))
            bound = memfd_bound(worst)
            row("memory tier, memfds (worst sample)",
                f"{worst['memfds']} (entries {worst['mem_entries']}, connections {worst['open']})",
                f"<= {bound} (max_memory_files {worst['max_memfds']})",
                all(x["memfds"] <= memfd_bound(x) for x in s),
                "memfds <= min(max_memory_files, entries + open connections)")
            n = len(s)
            q2 = s[n // 4: n // 2]
            q4 = s[3 * n // 4:]
            if len(q2) >= 2 and len(q4) >= 2:
                r2 = statistics.median(x["rss"] for x in q2)
                r4 = statistics.median(x["rss"] for x in q4)
                growth = r4 / r2 - 1
                row("resident memory, median VmRSS q4 vs q2", f"{mib(r2)} -> {mib(r4)} ({growth:+.1%})",
                    f"<= {a.rss_growth:+.0%}", growth <= a.rss_growth, "medians of the quarters")
                other = lambda x: x["fds"] - x["memfds"]
                f2, f4 = max(map(other, q2)), max(map(other, q4))
                row("descriptors other than memfds, max q4 vs q2", f"{f2} -> {f4}", f"<= {f2} + {a.fd_slack}",
                    f4 <= f2 + a.fd_slack, "max of the quarters + slack")
                t2, t4 = max(x["threads"] for x in q2), max(x["threads"] for x in q4)
                row("threads, max q4 vs q2", f"{t2} -> {t4}", f"<= {t2} + {a.thread_slack}",
                    t4 <= t2 + a.thread_slack, "max of the quarters + slack")
            else:
                row("samples", f"{n}", ">= 8", False, "too few samples to judge growth")
        row("server alive", "died" if dead or not self.final else "answering", "answering",
            not dead and self.final is not None, "/stats after the run")

        # 5xx: wrk's and the side clients' (by status and JSON code), and the server's own count.
        seen = dict(self.fivexx)
        for k, v in self.wrk.get("fivexx", {}).items():
            seen[k] = seen.get(k, 0) + v
        bad = {k: v for k, v in seen.items()
               if not (k.split(" ")[0] == "503" and k.split(" ", 1)[1] in DOCUMENTED_503)}
        documented = {k: v for k, v in seen.items() if k not in bad}
        server5 = {k: v for k, v in ((self.final or {}).get("requests", {}).get("by_status", {})).items()
                   if k.startswith("5") and k != "503"}
        if a.fake_documented_503 is not None:
            bad.update({k: v for k, v in documented.items() if k.split(" ", 1)[1] not in a.fake_documented_503})
        row("5xx other than a documented 503", f"clients {bad or 0}; /stats {server5 or 0}; documented 503s {documented or 0}",
            "0", not bad and not server5, "docs/API.md Errors")
        c = self.changes
        row("stale or wrong thumbnails after a change",
            f"{len(self.stale)} of {c['checks']} checks ({c['replaced']} replaced, {c['renamed']} renamed, "
            f"{c['deleted']} deleted; {c['inconclusive']} inconclusive 503s)",
            "0, and >= 1 of each change" if a.duration >= 30 else "0",
            not self.stale and (a.duration < 30 or min(c["replaced"], c["renamed"], c["deleted"]) >= 1),
            "the next request shows the change")

        w = self.wrk
        print()
        print(f"soak: {a.duration} s, wrk at {a.connections} connections ({a.back_connections} of them misses and "
              f"prefetches): {w['requests']} requests ({w['requests'] / max(1, a.duration):.0f}/s; "
              f"front {w['by_mix']['front']}, back {w['by_mix']['back']}), statuses {dict(sorted(w['statuses'].items()))}, "
              f"socket errors {w['errors']}")
        f = self.final or {}
        print(f"side clients: {self.side}, statuses {dict(sorted(self.side_statuses.items()))}; changes: {self.changes}")
        if f:
            print("server: renders %d (refused %d, abandoned %d, derived %d), memory evictions %d, disk evictions %d, "
                  "disk write_errors %d, 499s %s" % (
                      f["renders"]["total"], f["renders"]["refused"], f["renders"]["abandoned"], f["renders"]["derived"],
                      f["memory_cache"]["evictions"], f["disk_cache"]["evictions"], f["disk_cache"]["write_errors"],
                      f["requests"]["by_status"].get("499", 0)))
        if o and o["differ_count"]:
            print(f"observer: {o['differ_count']} files differ between the replay and a walk (path, replay, walk): {o['differ']}")
        if o:
            print(f"disk tier by st_blocks (du's count, info): peak {o['peak_st_blocks_bytes']} B; "
                  f"files first seen by a shard's listing: {o['found_by_listing']}")
        if s:
            print("per quarter (median RSS MiB / max fds / max memfds / max threads): " + " | ".join(
                "%.0f / %d / %d / %d" % (statistics.median(x["rss"] for x in q) / 1048576, max(x["fds"] for x in q),
                                         max(x["memfds"] for x in q), max(x["threads"] for x in q))
                for q in (s[:n // 4], s[n // 4:n // 2], s[n // 2:3 * n // 4], s[3 * n // 4:]) if q))
        print()
        widths = [max(len(str(r[i])) for r in rows + [("limit", "measured", "bound", "met")]) for i in range(4)]
        print("| " + " | ".join(h.ljust(widths[i]) for i, h in enumerate(("limit", "measured", "bound", "met"))) + " |")
        print("|" + "|".join("-" * (w_ + 2) for w_ in widths) + "|")
        for r in rows:
            print("| " + " | ".join(str(v).ljust(widths[i]) for i, v in enumerate(r)) + " |")
        for line in self.stale[:10]:
            print("stale: " + line)
        print()
        if crossed:
            print(f"soak: FAILED, {len(crossed)} limit(s) crossed:")
            for c_ in crossed:
                print("  - " + c_)
        passed = len(rows) - len(crossed)
        print(f"soak: {passed} passed, {len(crossed)} failed")
        return 1 if crossed else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--observer-pid", type=int, required=True)
    p.add_argument("--library", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--lua", required=True)
    p.add_argument("--duration", type=int, default=60)
    p.add_argument("--connections", type=int, default=256)
    p.add_argument("--back-connections", type=int, default=4)
    p.add_argument("--change-interval", type=float, default=1.0)
    p.add_argument("--change-photos", nargs="+", required=True)
    p.add_argument("--videos", nargs="*", default=[])
    p.add_argument("--etags", nargs=20, required=True)
    # The limits' tolerances, and fakes to see each check fail on purpose (soak.sh --help).
    p.add_argument("--rss-growth", type=float, default=0.10)
    p.add_argument("--fd-slack", type=int, default=32)
    p.add_argument("--thread-slack", type=int, default=4)
    p.add_argument("--samples-out", help="writes the per-second samples and the observer's report there (JSON)")
    p.add_argument("--memfd-slack", type=int, default=0)
    p.add_argument("--fake-stale", action="store_true")
    p.add_argument("--fake-disk-limit", type=int, default=0)
    p.add_argument("--fake-memory-limit", type=int, default=0)
    p.add_argument("--fake-documented-503", nargs="*", default=None)
    a = p.parse_args()
    sys.exit(Soak(a).run())


if __name__ == "__main__":
    main()
