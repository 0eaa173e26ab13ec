#!/usr/bin/python3
"""Scroll benchmark: a phone photo-grid client replayed against a running thumbd.

What it models (the scroll issue's client, followed as written):
  * A grid of C columns (3 by default) of square cells, cell height = screen width / C; the
    viewport is 7 rows high at 3 columns and keeps that height in screen units, so it shows
    7*C/3 rows (5 columns: 11.67, 1 column: 2.33). Cell i of the listing
    (GET /assets?sort=newest) sits in row i // C and shows thumbnails[str(C)], the versioned URL.
  * The scroll position y (in rows) moves down from the top at a constant speed, recomputed from
    the clock every ~10 ms tick. Speeds are given in grid-3 rows per second (a screen is 7 of
    them); after a grid switch the same screen speed is kept, i.e. v*C/3 rows of the new grid.
    Visible rows: those intersecting [y, y + rowsOnScreen).
  * A cell that becomes visible issues its GET at once over a pool of 6 keep-alive HTTP/1.1
    connections (URLSession's 6 per host); with all 6 busy it waits in a client-side FIFO. A cell
    that leaves the visible area before its last byte arrived is cancelled: on a connection, that
    connection is closed (as URLSession does on cell reuse) and a new one is opened for the next
    request; still queued, it is dropped from the FIFO.
  * --prefetch: Apple's PHCachingImageManager sample: the preheat rect is the visible rect grown by
    half a viewport above and below, recomputed only after the scroll moved more than a third of a
    viewport since the last computation (the first one compares with a zero rect, as the sample);
    rows newly inside it and not covered by a job of ours start a range POST /prefetch
    {"grid","sort":"newest","start","end","focus"} (contiguous rows in one job; focus: the first
    visible cell, which the server warms from); jobs all of whose rows
    left the preheat rect are stopped with DELETE /prefetch/{id}. These calls go over one more
    keep-alive connection, fired without blocking the scroll loop; each answer is checked
    (202 + job JSON with an id, 200 + final job on DELETE).
  * --switch: grid 3 for a few seconds, then 5 columns (DELETE /prefetch, cancel every cell request
    of the old grid not yet complete, new layout keeping the top asset index, preheat again, hold
    still until that screen is drawn, at most SWITCH_HOLD seconds, then scroll on), then 1 column
    likewise.
  * The run ends after --duration seconds or at the end of the library; the last screen then stays
    put until its cells are ready (at most --final-wait seconds).

Figures (all from timestamps taken in this process, time.perf_counter):
  cells shown        cells that became visible (a cell of another grid is another cell)
  drawn              cells whose last byte arrived while they were visible
  blank time         from becoming visible to the last byte of the response. A cell that scrolled
                     away first ("scrolled away blank"), or was still blank when the run ended, is
                     censored: its blank time is its whole visible time, a lower bound.
  ready <=50ms       share of the cells that became visible after the first 1.5 s whose blank time
                     was at most 50 ms (censored cells count as not ready)
  p50 / p95 blank    over the cells that became visible after the first 1.5 s (the cells the
                     ready figure counts, as the scroll issue's table reads them), censored ones
                     included at their visible time; "p95 blank (all cells)" over every cell shown,
                     the first screen's included (cold cells a scroll starting at once cannot have)
  renders/drawn      delta of /stats renders.total over the run (read when the server is idle,
                     before, and after everything was stopped and the server drained) / cells drawn
  first screen       from the start to the last byte of the last cell of the first screen (21 at
                     grid 3); "-" with a count when some of them never became ready; in
                     brackets, that time over the pool time of the screen's renders (the least
                     time one worker per core needs for the render times its misses reported in
                     Server-Timing, each render on one worker: pool_time): the scroll issue's
                     "within 1.3x of the time the render pool needs for those renders alone"
                     (cells drawn from a prefetch's render count nothing there, so the ratio is
                     an upper bound)
  after switch       from a grid switch to when every cell visible right after it was ready,
                     with the same ratio
  errors             non-200 answers and broken connections of cell GETs (not cancelled ones),
                     and prefetch calls that failed or answered what the API does not say
  leaks              after the run, within a bounded wait: /stats connections.open back to 1 (our
                     stats connection), renders.queued, renders.in_flight and prefetch.queued 0
  conn check         server's connections.total delta against the connections this client opened
                     (a cancel must really close and reopen a connection)
  server queue       client misses waiting for a render worker (renders.queued - prefetch.queued),
                     sampled from /stats every 0.25 s while scrolling: abandoned requests pile up here
  server extras      /stats fields about abandoned work when present (renders.abandoned/dropped,
                     renders.derived: made from a cached larger grid,
                     requests.aborted, 499s...), as deltas over the run

Usage, against a server already running (its cache should be cold for figures that mean anything):
  scroll.py --url http://127.0.0.1:18150 [--speed 6] [--prefetch] [--duration 15] [--switch]
  scroll.py --url ... --calibrate 60     renders/s with every worker busy (cold GETs at grid 3)
  scroll.py --table results.jsonl        the Markdown table of JSON lines written with --json-out
  --cells-out FILE                       also one JSON line per cell (its times, state, X-Cache): which
                                         cells were not ready, and why
Only 127.0.0.1 is ever contacted. Python 3 standard library only.
"""
import argparse
import asyncio
import collections
import itertools
import json
import math
import os
import re
import sys
import time
import urllib.parse

now = time.perf_counter
POOL_SIZE = 6
TICK = 0.010
ROWS_AT_3 = 7.0
STEADY_AFTER = 1.5
READY_MS = 50.0
# After a grid switch the view holds still until the new screen is drawn, at most this long (s),
# then scrolls on: a pinch to change columns is not made mid-fling, and a screen scrolled away
# before it is drawn has no "first screen" time to give.
SWITCH_HOLD = 3.0


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# HTTP/1.1 over asyncio streams

async def read_response(reader, head=False):
    """Reads one response. Returns (status, headers, body, t_first_line, t_last_byte)."""
    line = await reader.readline()
    if not line:
        raise ConnectionError("connection closed before a status line")
    t_first = now()
    parts = line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise ConnectionError(f"bad status line {line[:60]!r}")
    status = int(parts[1])
    headers = {}
    for _ in range(200):
        h = await reader.readline()
        if not h:
            raise ConnectionError("connection closed in headers")
        if h in (b"\r\n", b"\n"):
            break
        k, _, v = h.decode("latin-1").partition(":")
        headers[k.strip().lower()] = v.strip()
    else:
        raise ConnectionError("too many header lines")
    if head or status in (204, 304) or 100 <= status < 200:
        body = b""
    elif "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        chunks = []
        for _ in range(100000):
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
                break
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
        body = b"".join(chunks)
    else:
        body = await reader.read()
        headers["connection"] = "close"
    return status, headers, body, t_first, now()


# Names this run's prefetch jobs (docs/API.md, "Prefetch"): its DELETE /prefetch stops its own jobs
# only, so two runs against one server do not cancel each other's.
CLIENT_ID = f"scroll-bench-{os.getpid()}"


def request_bytes(method, path, host, body=None, extra=()):
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "User-Agent: thumbd-scroll-bench/1",
             "Accept: */*"]
    lines += list(extra)
    if body is not None:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return data + (body or b"")


class Conn:
    """One keep-alive connection for API and /stats calls, requests one at a time (FIFO lock),
    reopened when the server closed it. Counts the connections it opens."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.reader = self.writer = None
        self.lock = asyncio.Lock()
        self.connects = 0

    async def _open(self):
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.connects += 1

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def request(self, method, path, body=None, timeout=10.0):
        async with self.lock:
            for attempt in range(2):
                fresh = self.writer is None
                try:
                    async with asyncio.timeout(timeout):
                        if fresh:
                            await self._open()
                        self.writer.write(request_bytes(method, path, f"{self.host}:{self.port}", body,
                                                        extra=(f"Thumbd-Client-Id: {CLIENT_ID}",)))
                        st, hd, bd, _, _ = await read_response(self.reader, head=(method == "HEAD"))
                    if hd.get("connection", "").lower() == "close":
                        self.close()
                    return st, hd, bd
                except (ConnectionError, asyncio.IncompleteReadError, OSError):
                    self.close()
                    if fresh or attempt == 1:  # a fresh connection failing is not a stale keep-alive
                        raise
                except (TimeoutError, asyncio.CancelledError):
                    self.close()   # a request may be half done: never reuse the connection
                    raise

    async def json(self, method, path, body=None, timeout=10.0):
        st, _, bd = await self.request(method, path, body, timeout)
        try:
            return st, json.loads(bd) if bd else None
        except ValueError:
            return st, None


# ---------------------------------------------------------------------------------------------
# The cell pool: 6 connections, a FIFO, cancellation by closing the connection

class Cell:
    __slots__ = ("grid", "index", "url", "t_visible", "t_hidden", "t_sent", "t_first", "t_last",
                 "status", "state", "xcache", "render_ms", "bytes", "error", "task", "slot", "steady")

    def __init__(self, grid, index, url, t_visible, steady):
        self.grid, self.index, self.url, self.t_visible, self.steady = grid, index, url, t_visible, steady
        self.t_hidden = self.t_sent = self.t_first = self.t_last = None
        self.status = None
        self.state = "new"   # queued | sent | done | error | dropped (queue) | cancelled (connection)
        self.xcache = None
        self.render_ms = None   # Server-Timing render;dur of a miss this request waited for
        self.bytes = 0
        self.error = None
        self.task = self.slot = None

    @property
    def ready(self):  # last byte arrived while visible, with a 200
        return self.state == "done" and self.status == 200

    def blank_s(self, t_end):
        if self.ready:
            return self.t_last - self.t_visible
        return (self.t_hidden if self.t_hidden is not None else t_end) - self.t_visible


class Slot:
    def __init__(self, n):
        self.n = n
        self.reader = self.writer = None
        self.cell = None


class Pool:
    def __init__(self, host, port, size=POOL_SIZE):
        self.host, self.port = host, port
        self.slots = [Slot(i) for i in range(size)]
        self.fifo = collections.deque()
        self.connects = 0
        self.cancel_closes = 0      # connections closed because their cell scrolled away
        self.queue_drops = 0        # queued requests dropped because their cell scrolled away
        self.max_queue = 0
        self.idle = asyncio.Event()

    def submit(self, cell):
        cell.state = "queued"
        self.fifo.append(cell)
        self.dispatch()
        self.max_queue = max(self.max_queue, sum(1 for c in self.fifo if c.state == "queued"))

    def dispatch(self):
        for slot in self.slots:
            if slot.cell is not None:
                continue
            while self.fifo and self.fifo[0].state != "queued":
                self.fifo.popleft()
            if not self.fifo:
                break
            cell = self.fifo.popleft()
            cell.state, cell.slot, slot.cell = "sent", slot, cell
            cell.task = asyncio.get_running_loop().create_task(self._run(slot, cell))
        if all(s.cell is None for s in self.slots) and not any(c.state == "queued" for c in self.fifo):
            self.idle.set()
        else:
            self.idle.clear()

    def busy(self):
        return sum(1 for s in self.slots if s.cell is not None)

    def cancel(self, cell):
        """The cell left the screen before its last byte: drop it, or close its connection."""
        if cell.state == "queued":
            cell.state = "dropped"
            self.queue_drops += 1
        elif cell.state == "sent":
            slot = cell.slot
            cell.state = "cancelled"
            self.cancel_closes += 1
            connecting = slot.writer is None
            if not connecting:
                slot.writer.close()
            slot.reader = slot.writer = None
            slot.cell = None
            if not connecting:
                cell.task.cancel()
            # (still connecting: the task closes the connection it opens, see _run)
            self.dispatch()

    async def _run(self, slot, cell):
        try:
            if slot.writer is None:
                r, w = await asyncio.open_connection(self.host, self.port)
                self.connects += 1
                if slot.cell is not cell:   # cancelled while connecting
                    w.close()
                    return
                slot.reader, slot.writer = r, w
            reader, writer = slot.reader, slot.writer
            cell.t_sent = now()
            writer.write(request_bytes("GET", cell.url, f"{self.host}:{self.port}"))
            st, hd, bd, t_first, t_last = await read_response(reader)
            if slot.cell is not cell:
                return
            cell.t_first, cell.t_last, cell.status = t_first, t_last, st
            cell.xcache = hd.get("x-cache")
            m = re.search(r"render;dur=([0-9.]+)", hd.get("server-timing", ""))
            cell.render_ms = float(m.group(1)) if m else None
            cell.bytes = len(bd)
            cell.state = "done"
            if hd.get("connection", "").lower() == "close":
                writer.close()
                slot.reader = slot.writer = None
        except asyncio.CancelledError:
            return
        except (ConnectionError, asyncio.IncompleteReadError, OSError, ValueError) as e:
            if slot.cell is cell:
                cell.state, cell.error, cell.t_last = "error", repr(e)[:120], now()
                if slot.writer is not None:
                    slot.writer.close()
                slot.reader = slot.writer = None
        finally:
            if slot.cell is cell:
                slot.cell = None
                self.dispatch()

    def close_all(self):
        for c in self.fifo:
            if c.state == "queued":
                c.state = "dropped"
        self.fifo.clear()
        for s in self.slots:
            if s.cell is not None:
                self.cancel(s.cell)
            if s.writer is not None:
                s.writer.close()
            s.reader = s.writer = None


# ---------------------------------------------------------------------------------------------
# Layout and the preheat model

class Layout:
    def __init__(self, columns, n):
        self.c = columns
        self.n = n
        self.rows_on_screen = ROWS_AT_3 * columns / 3.0
        self.rows = math.ceil(n / columns)
        self.y_max = max(0.0, self.rows - self.rows_on_screen)

    def rows_in(self, top, bottom):
        """Rows intersecting [top, bottom)."""
        r0 = max(0, math.floor(top))
        r1 = min(self.rows, math.ceil(bottom - 1e-9))
        return range(r0, max(r0, r1))

    def visible_rows(self, y):
        return self.rows_in(y, y + self.rows_on_screen)

    def cells_of_rows(self, rows):
        for r in rows:
            for i in range(r * self.c, min(self.n, (r + 1) * self.c)):
                yield i


class Preheat:
    """PHCachingImageManager sample (updateCachedAssets) with range prefetch jobs."""

    def __init__(self, layout, api, stats):
        self.layout, self.api, self.stats = layout, api, stats
        self.prev_mid = 0.0      # the sample starts from a zero rect
        self.jobs = []           # dicts: rows (r0, r1), id, state
        self.updates = 0

    def update(self, y):
        lay = self.layout
        h = lay.rows_on_screen
        top, bottom = y - h / 2, y + h + h / 2
        mid = (top + bottom) / 2
        if abs(mid - self.prev_mid) <= h / 3:
            return
        self.prev_mid = mid
        self.updates += 1
        rows = set(lay.rows_in(top, bottom))
        covered = set()
        for j in self.jobs:
            covered.update(range(*j["rows"]))
        new = sorted(rows - covered)
        # contiguous runs of new rows: one job each
        runs, start = [], None
        for k, r in enumerate(new):
            if start is None:
                start = r
            if k + 1 == len(new) or new[k + 1] != r + 1:
                runs.append((start, r + 1))
                start = None
        for r0, r1 in runs:
            job = {"rows": (r0, r1), "id": None, "state": "posting"}
            self.jobs.append(job)
            # focus: the first visible cell, so a rect that also covers rows scrolled past (a
            # grid switch's first one) warms the screen and what is ahead of it first
            body = json.dumps({"grid": str(lay.c), "sort": "newest", "start": r0 * lay.c,
                               "end": min(lay.n, r1 * lay.c),
                               "focus": min(lay.n, math.floor(y) * lay.c)}).encode()
            self.stats.fire(self._post(job, body))
        for j in list(self.jobs):
            if not rows.intersection(range(*j["rows"])):
                self.jobs.remove(j)
                self.stats.fire(self._delete(j))

    async def _post(self, job, body):
        self.stats.prefetch_posts += 1
        try:
            st, js = await self.api.json("POST", "/prefetch", body)
        except (OSError, ConnectionError, asyncio.IncompleteReadError, TimeoutError) as e:
            self.stats.prefetch_fail(f"POST /prefetch: {e!r}"[:160])
            return
        if st != 202 or not isinstance(js, dict) or not isinstance(js.get("id"), int) \
                or js.get("state") not in ("running", "done"):
            self.stats.prefetch_fail(f"POST /prefetch answered {st} {str(js)[:100]}")
            return
        job["id"], job["state"] = js["id"], js["state"]
        self.stats.prefetch_items += js.get("total", 0)

    async def _delete(self, job):
        # Runs after the POST on the same FIFO connection, so the id is known by now.
        if job["id"] is None:
            return
        self.stats.prefetch_deletes += 1
        try:
            st, js = await self.api.json("DELETE", f"/prefetch/{job['id']}")
        except (OSError, ConnectionError, asyncio.IncompleteReadError, TimeoutError) as e:
            self.stats.prefetch_fail(f"DELETE /prefetch/{job['id']}: {e!r}"[:160])
            return
        if st != 200 or not isinstance(js, dict) or js.get("id") != job["id"] \
                or js.get("state") not in ("cancelled", "done"):
            self.stats.prefetch_fail(f"DELETE /prefetch/{job['id']} answered {st} {str(js)[:100]}")


class ApiCalls:
    """Fire-and-forget API calls (over the API connection) and their outcome counters."""

    def __init__(self):
        self.tasks = []
        self.prefetch_posts = self.prefetch_deletes = self.prefetch_stop_all = 0
        self.prefetch_items = 0
        self.prefetch_failures = []

    def fire(self, coro):
        self.tasks.append(asyncio.get_running_loop().create_task(coro))

    def prefetch_fail(self, what):
        self.prefetch_failures.append(what)

    async def drain(self, timeout=15.0):
        pending = [t for t in self.tasks if not t.done()]
        if pending:
            done, pending = await asyncio.wait(pending, timeout=timeout)
            for t in pending:
                t.cancel()
                self.prefetch_fail("an API call did not finish in time")


async def stop_all(api, calls):
    calls.prefetch_stop_all += 1
    try:
        st, js = await api.json("DELETE", "/prefetch")
    except (OSError, ConnectionError, asyncio.IncompleteReadError, TimeoutError) as e:
        calls.prefetch_fail(f"DELETE /prefetch: {e!r}"[:160])
        return
    if st != 200 or not isinstance(js, dict) or not isinstance(js.get("jobs"), list):
        calls.prefetch_fail(f"DELETE /prefetch answered {st} {str(js)[:100]}")


# ---------------------------------------------------------------------------------------------
# /stats helpers

def get(d, path, default=None):
    for k in path.split("."):
        if not isinstance(d, dict) or k not in d:
            return default
        d = d[k]
    return d


def flatten(d, prefix=""):
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(flatten(v, f"{prefix}{k}."))
    else:
        out[prefix[:-1]] = d
    return out


EXTRA_RE = re.compile(r"abandon|drop|abort|disconnect|gone|client_left|499|derived")


def extras(stats):
    """Fields about work for clients that left, when the server has them (not all builds do)."""
    out = {}
    for k, v in flatten(stats).items():
        if isinstance(v, (int, float)) and not isinstance(v, bool) \
                and (k.startswith("renders.") or k.startswith("requests.")) and EXTRA_RE.search(k):
            out[k] = v
    return out


async def sample_queue(stats_conn, samples, stop, period=0.25, limit=2400):
    """Samples the server's render queue while scrolling (bounded count; stopped at the end)."""
    for _ in range(limit):
        if stop.is_set():
            return
        try:
            _, s = await stats_conn.json("GET", "/stats", timeout=2.0)
            # renders.queued holds client misses and prefetch items; prefetch.queued the latter
            samples.append((now(), get(s, "renders.queued", 0) - get(s, "prefetch.queued", 0),
                            get(s, "prefetch.queued", 0)))
        except (OSError, ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        try:
            await asyncio.wait_for(stop.wait(), period)
        except TimeoutError:
            pass


async def wait_idle(stats_conn, timeout):
    """Waits (bounded) for renders.in_flight and renders.queued to reach 0. Returns (stats, ok)."""
    deadline = now() + timeout
    s = None
    while True:
        _, s = await stats_conn.json("GET", "/stats")
        if get(s, "renders.in_flight", 0) == 0 and get(s, "renders.queued", 0) == 0:
            return s, True
        if now() > deadline:
            return s, False
        await asyncio.sleep(0.1)


async def leak_check(stats_conn, timeout):
    deadline = now() + timeout
    while True:
        _, s = await stats_conn.json("GET", "/stats")
        left = {}
        if get(s, "connections.open", 1) != 1:
            left["connections.open"] = get(s, "connections.open")
        for k in ("renders.queued", "renders.in_flight", "prefetch.queued"):
            if get(s, k, 0) != 0:
                left[k] = get(s, k)
        if not left or now() > deadline:
            return left, s
        await asyncio.sleep(0.1)


async def listing(conn, timeout=60.0):
    """The whole listing, sort=newest, paginated; waits (bounded) while the index is building."""
    deadline = now() + timeout
    items, offset, total = [], 0, None
    for _ in range(1000):
        st, js = await conn.json("GET", f"/assets?sort=newest&offset={offset}&limit=10000")
        if st == 503:
            if now() > deadline:
                raise SystemExit("the server kept answering 503 to /assets")
            await asyncio.sleep(0.2)
            continue
        if st != 200 or not isinstance(js, dict):
            raise SystemExit(f"/assets answered {st}")
        total = js["total"]
        items += js["items"]
        offset = len(items)
        if offset >= total or not js["items"]:
            break
    return items


def pool_time(durations, workers):
    """The least time `workers` workers need for these jobs, each job on one worker (a render
    is not split): exact for a few jobs (every assignment tried; three equal renders on two
    workers need two renders' time, not one and a half), else the bound max(sum / workers,
    longest), which many jobs meet within one job's time. A lower bound either way."""
    if not durations:
        return 0.0
    bound = max(sum(durations) / workers, max(durations))
    if workers ** len(durations) > 1 << 16:
        return bound
    best = math.inf
    for assignment in itertools.product(range(workers), repeat=len(durations)):
        loads = [0.0] * workers
        for job, worker in zip(durations, assignment):
            loads[worker] += job
        best = min(best, max(loads))
    return best


def percentile(values, p):
    if not values:
        return None
    v = sorted(values)
    k = (len(v) - 1) * p / 100.0
    f = math.floor(k)
    c = min(len(v) - 1, f + 1)
    return v[f] + (v[c] - v[f]) * (k - f)


def parse_url(url):
    u = urllib.parse.urlsplit(url)
    if u.scheme != "http" or u.hostname != "127.0.0.1":
        raise SystemExit("--url must be http://127.0.0.1:PORT (this benchmark loads 127.0.0.1 only)")
    return u.hostname, u.port or 80


# ---------------------------------------------------------------------------------------------
# One scroll run

async def scroll_run(args):
    host, port = parse_url(args.url)
    stats_conn = Conn(host, port)
    api = Conn(host, port)
    items = await listing(stats_conn)
    n = len(items)
    if n == 0:
        raise SystemExit("the library is empty")
    urls = {g: [it["thumbnails"][g] for it in items] for g in ("1", "3", "5")}

    s0, idle0 = await wait_idle(stats_conn, 30)
    cold = get(s0, "memory_cache.entries", 0) == 0 and get(s0, "disk_cache.entries", 0) == 0
    if not cold:
        log(f"warning: the cache is not cold ({get(s0, 'memory_cache.entries')} memory, "
            f"{get(s0, 'disk_cache.entries')} disk entries): figures are not comparable")

    if args.switch:
        segments = [(3, args.switch_seconds), (5, args.switch_seconds), (1, args.switch_seconds)]
    else:
        segments = [(args.columns, args.duration)]
    pool = Pool(host, port)
    calls = ApiCalls()
    cells = []
    screens = []          # first screen, then one per switch: dict(label, t0, cells)
    lags = []
    end_reached = False
    y = 0.0
    samples = []          # (t, client misses queued, prefetch items queued) every 0.25 s
    stop_sampling = asyncio.Event()
    sampling = asyncio.get_running_loop().create_task(sample_queue(stats_conn, samples, stop_sampling))
    t0 = now()
    tick = 0
    visible = {}
    for seg_no, (columns, seconds) in enumerate(segments):
        lay = Layout(columns, n)
        v = args.speed * columns / 3.0          # same screen speed, in rows of this grid
        t_seg = t_switch = now()
        if seg_no > 0:
            # grid switch: stop every job, cancel what is not complete, keep the top asset index
            old_lay = segments[seg_no - 1][0]
            for c in visible.values():
                c.t_hidden = t_switch
                if c.state in ("queued", "sent"):
                    pool.cancel(c)
            if args.prefetch:
                calls.fire(stop_all(api, calls))
            top_index = math.floor(y) * old_lay
            y = float(min(top_index // columns, lay.y_max))
        y0 = y
        preheat = Preheat(lay, api, calls) if args.prefetch else None
        visible = {}
        screen = None
        t_moving = None          # when the view starts moving: at once on the first grid
        while True:
            t = now()
            if screen is None:       # the segment's first tick: the screen at exactly y0
                t_seg = t
                if seg_no == 0:
                    t_moving = t
            elif t_moving is None and (t - t_seg >= SWITCH_HOLD or not any(
                    c.state in ("queued", "sent") for c in screen["cells"])):
                t_moving = t     # the screen after the switch is drawn (or the hold is over)
            if t - t_seg >= seconds:
                break
            y = min(lay.y_max, y0 + v * (t - t_moving if t_moving is not None else 0.0))
            vis = set(lay.cells_of_rows(lay.visible_rows(y)))
            for i in sorted(vis.difference(visible)):   # grid order, as a grid view lays its cells out
                c = Cell(columns, i, urls[str(columns)][i], t, (t - t0) >= STEADY_AFTER)
                cells.append(c)
                visible[i] = c
                pool.submit(c)
            for i in [i for i in visible if i not in vis]:
                c = visible.pop(i)
                c.t_hidden = t
                if c.state in ("queued", "sent"):
                    pool.cancel(c)
            if screen is None:
                screen = {"label": "first screen" if seg_no == 0 else
                          f"after switch {segments[seg_no - 1][0]}->{columns}",
                          "t0": t0 if seg_no == 0 else t_switch, "cells": list(visible.values())}
                screens.append(screen)
            if preheat is not None:
                preheat.update(y)
            if y >= lay.y_max and seg_no == len(segments) - 1:
                end_reached = True
                break
            tick += 1
            target = t0 + tick * TICK
            delay = target - now()
            if delay < -TICK:          # the loop fell behind: do not try to catch up in a burst
                lags.append(-delay)
                tick = math.ceil((now() - t0) / TICK)
                delay = 0
            else:
                lags.append(max(0.0, -delay))
            await asyncio.sleep(max(0.0, delay))
    t_scroll_end = now()
    queued_at_scroll_end = samples[-1][1] if samples else None
    # The last screen stays put until its cells are ready (bounded).
    deadline = t_scroll_end + args.final_wait
    while now() < deadline and any(c.state in ("queued", "sent") for c in visible.values()):
        await asyncio.sleep(TICK)
    t_end = now()
    for c in visible.values():
        if c.state in ("queued", "sent"):
            c.t_hidden = t_end
            pool.cancel(c)
            c.state = "blank_at_end"
    stop_sampling.set()
    await asyncio.wait([sampling], timeout=5)
    pool.close_all()
    if args.prefetch:
        calls.fire(stop_all(api, calls))
    await calls.drain()
    api.close()
    await asyncio.sleep(0)

    s1, idle1 = await wait_idle(stats_conn, args.drain_wait)
    t_drained = now()
    left, s2 = await leak_check(stats_conn, 10)
    stats_conn.close()

    if args.cells_out:
        with open(args.cells_out, "w") as f:
            for c in cells:
                rel = lambda t: None if t is None else round(t - t0, 4)
                f.write(json.dumps({"grid": c.grid, "index": c.index, "steady": c.steady,
                                    "visible": rel(c.t_visible), "hidden": rel(c.t_hidden), "sent": rel(c.t_sent),
                                    "first": rel(c.t_first), "last": rel(c.t_last), "state": c.state,
                                    "status": c.status, "x_cache": c.xcache}) + "\n")

    # ---- figures, from the timestamps above
    shown = len(cells)
    ready = [c for c in cells if c.ready]
    blank_ms = [c.blank_s(t_end) * 1000 for c in cells]
    steady = [c for c in cells if c.steady]
    steady_ready50 = sum(1 for c in steady if c.ready and (c.t_last - c.t_visible) * 1000 <= READY_MS)
    scrolled = [c for c in cells if c.state in ("dropped", "cancelled")]
    at_end = [c for c in cells if c.state == "blank_at_end"]
    non200 = [c for c in cells if c.state == "done" and c.status != 200]
    broken = [c for c in cells if c.state == "error"]
    renders = get(s1, "renders.total", 0) - get(s0, "renders.total", 0)
    renders_pf = get(s1, "renders.prefetch", 0) - get(s0, "renders.prefetch", 0)
    xcache = collections.Counter(c.xcache for c in ready)
    e0, e1 = extras(s0), extras(s2)
    extra = {k: e1[k] - e0.get(k, 0) for k in sorted(e1)}
    status_delta = {k: v - get(s0, f"requests.by_status.{k}", 0)
                    for k, v in (get(s2, "requests.by_status", {}) or {}).items()
                    if v - get(s0, f"requests.by_status.{k}", 0)}
    # connections this client opened between the two /stats reads, against the server's count
    client_conns = pool.connects + api.connects
    server_conns = get(s2, "connections.total", 0) - get(s0, "connections.total", 0) - \
        (stats_conn.connects - 1)

    def screen_fig(sc):
        cs = sc["cells"]
        ok = [c for c in cs if c.ready]
        d = {"label": sc["label"], "cells": len(cs), "ready": len(ok),
             "ms": round((max(c.t_last for c in ok) - sc["t0"]) * 1000, 1)
             if ok and len(ok) == len(cs) else None}
        # The time the render pool needs for the screen's renders alone: the render times its
        # misses reported (Server-Timing) on one worker per core (the server's default, on this
        # machine), each render on one worker (pool_time). Cells drawn from a prefetch's render
        # count nothing, so this is a lower bound of the pool's work and the ratio to it an
        # upper bound.
        renders = [c.render_ms for c in cs if c.render_ms is not None]
        d["renders"] = len(renders)
        d["renders_pool_ms"] = round(pool_time(renders, os.cpu_count() or 1), 1)
        if len(ok) < len(cs):
            d["never_ready"] = {"scrolled_away": sum(1 for c in cs if c.state in ("dropped", "cancelled")),
                                "blank_at_end": sum(1 for c in cs if c.state == "blank_at_end"),
                                "errors": sum(1 for c in cs if c.state == "error" or (c.state == "done" and c.status != 200))}
        return d

    def r1(x):
        return None if x is None else round(x, 1)

    res = {
        "kind": "run", "label": args.label or ("switch" if args.switch else f"v={args.speed:g}"),
        "scenario": "switch" if args.switch else "speed",
        "speed_rows_per_s_at_3": round(args.speed, 2), "prefetch": bool(args.prefetch),
        "photos": n, "segments": [[c, s] for c, s in segments], "cold_cache": cold,
        "scrolled_s": round(t_scroll_end - t0, 2), "end_of_library": end_reached,
        "cells_shown": shown, "cells_drawn": len(ready),
        "steady_cells": len(steady),
        "ready_50ms_pct": r1(100.0 * steady_ready50 / len(steady)) if steady else None,
        "blank_p50_ms": r1(percentile(blank_ms, 50)), "blank_p95_ms": r1(percentile(blank_ms, 95)),
        "blank_p50_steady_ms": r1(percentile([c.blank_s(t_end) * 1000 for c in steady], 50)),
        "blank_p95_steady_ms": r1(percentile([c.blank_s(t_end) * 1000 for c in steady], 95)),
        "blank_max_ms": r1(max(blank_ms) if blank_ms else None),
        "scrolled_away_blank": len(scrolled),
        "scrolled_away_on_connection": sum(1 for c in scrolled if c.state == "cancelled"),
        "scrolled_away_in_queue": sum(1 for c in scrolled if c.state == "dropped"),
        "blank_at_end": len(at_end),
        "renders": renders, "renders_prefetch": renders_pf,
        "renders_per_cell_drawn": round(renders / len(ready), 2) if ready else None,
        "drawn_by_x_cache": dict(xcache),
        "screens": [screen_fig(sc) for sc in screens],
        "errors": {"cell_non200": len(non200), "cell_broken": len(broken),
                   "cell_statuses": dict(collections.Counter(c.status for c in non200)),
                   "prefetch_failures": len(calls.prefetch_failures),
                   "prefetch_failure_examples": calls.prefetch_failures[:3],
                   "broken_examples": [c.error for c in broken[:3]]},
        "prefetch_calls": {"posts": calls.prefetch_posts, "deletes": calls.prefetch_deletes,
                           "stop_all": calls.prefetch_stop_all, "items": calls.prefetch_items},
        "connections": {"client_opened": client_conns, "server_counted": server_conns,
                        "pool_opened": pool.connects,
                        "cancel_closes": pool.cancel_closes, "queue_drops": pool.queue_drops,
                        "max_client_queue": pool.max_queue},
        "server_drained": idle1, "drain_s": round(t_drained - t_end, 1),
        "leaks": left,
        "server_extras": extra,
        "requests_by_status": status_delta,
        "prefetch_stats": {k: get(s2, f"prefetch.{k}", 0) - get(s0, f"prefetch.{k}", 0)
                           for k in ("done", "skipped", "failed", "cancelled")},
        "client_tick_lag_p95_ms": r1(percentile([x * 1000 for x in lags], 95)),
        "client_tick_lag_max_ms": r1(max(lags) * 1000 if lags else 0.0),
        "server_queue": {"max_queued": max((q for _, q, _ in samples), default=None),
                         "queued_at_scroll_end": queued_at_scroll_end,
                         "max_prefetch_queued": max((p for _, _, p in samples), default=None),
                         "samples": len(samples)},
        "renders_not_drawn": renders - len(ready),
    }
    return res


# ---------------------------------------------------------------------------------------------
# Calibration: renders/s with every worker busy

async def calibrate(args):
    host, port = parse_url(args.url)
    stats_conn = Conn(host, port)
    items = await listing(stats_conn)
    m = min(args.calibrate, len(items))
    step = len(items) / m
    picks = [items[int(k * step)]["thumbnails"]["3"] for k in range(m)]   # spread over the library
    await wait_idle(stats_conn, 30)
    pool = Pool(host, port)
    cells = [Cell(3, k, u, now(), False) for k, u in enumerate(picks)]
    for c in cells:
        pool.submit(c)
    window = []   # (t, renders.total) once 6 answers are in, and when only 6 are left
    deadline = now() + 120
    while now() < deadline:
        done = sum(1 for c in cells if c.state in ("done", "error"))
        if not window and done >= POOL_SIZE:
            _, s = await stats_conn.json("GET", "/stats")
            window.append((now(), get(s, "renders.total", 0)))
        elif len(window) == 1 and m - done <= POOL_SIZE:
            _, s = await stats_conn.json("GET", "/stats")
            window.append((now(), get(s, "renders.total", 0)))
        if done == m:
            break
        await asyncio.sleep(0.005)
    pool.close_all()
    errors = sum(1 for c in cells if not c.ready)
    await wait_idle(stats_conn, 60)
    stats_conn.close()
    if len(window) < 2 or window[1][0] <= window[0][0]:
        raise SystemExit("calibration: too few requests for a window (raise --calibrate)")
    rate = (window[1][1] - window[0][1]) / (window[1][0] - window[0][0])
    return {"kind": "calibration", "gets": m, "errors": errors,
            "window_s": round(window[1][0] - window[0][0], 2),
            "window_renders": window[1][1] - window[0][1],
            "renders_per_s": round(rate, 2), "saturated_speed_rows_per_s_at_3": round(rate / 3, 2)}


# ---------------------------------------------------------------------------------------------
# Output

def fmt_ms(x):
    if x is None:
        return "-"
    return f"{x / 1000:.2f} s" if x >= 1000 else f"{x:.0f} ms"


def screens_text(r):
    parts = []
    for sc in r["screens"]:
        name = "start" if sc["label"] == "first screen" else sc["label"].replace("after switch ", "")
        if sc["ms"] is not None:
            pool = sc.get("renders_pool_ms")
            ratio = f" ({sc['ms'] / pool:.1f}x its {sc['renders']} renders' {fmt_ms(pool)})" if pool else ""
            parts.append(f"{name} {fmt_ms(sc['ms'])}{ratio}")
        else:
            nr = sc.get("never_ready", {})
            why = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in nr.items() if v)
            parts.append(f"{name} - ({sc['ready']}/{sc['cells']} ready; {why})")
    return "; ".join(parts)


def table(results):
    runs = [r for r in results if r.get("kind") == "run"]
    cal = [r for r in results if r.get("kind") == "calibration"]
    out = []
    for c in cal:
        out.append(f"calibration: {c['renders_per_s']} renders/s with every worker busy "
                   f"({c['window_renders']} renders in {c['window_s']} s of {c['gets']} cold grid-3 GETs) "
                   f"-> saturated speed {c['saturated_speed_rows_per_s_at_3']} rows/s at 3 columns")
    out.append("")
    out.append("| run | speed (rows/s) | prefetch | cells shown | ready <=50 ms (after 1.5 s) "
               "| p50 / p95 blank (after 1.5 s) | p95 blank (all cells) "
               "| scrolled away blank | renders / cell drawn | first screen | errors | leaks |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        e = r["errors"]
        err = e["cell_non200"] + e["cell_broken"] + e["prefetch_failures"]
        err_s = str(err) if not err else f"{err} ({e['cell_non200']} non-200 {e['cell_statuses']}, " \
            f"{e['cell_broken']} broken, {e['prefetch_failures']} prefetch)"
        leaks = "none" if not r["leaks"] else ", ".join(f"{k}={v}" for k, v in r["leaks"].items())
        if not r["server_drained"]:
            leaks += f" (not drained after {r['drain_s']} s)"
        speed = f"{r['speed_rows_per_s_at_3']:g}"
        if r["scenario"] == "switch":
            speed += " (3->5->1 cols)"
        ready = "-" if r["ready_50ms_pct"] is None else f"{r['ready_50ms_pct']:.0f}% of {r['steady_cells']}"
        away = str(r["scrolled_away_blank"])
        if r["blank_at_end"]:
            away += f" (+{r['blank_at_end']} blank at end)"
        rpc = ("-" if r["renders_per_cell_drawn"] is None else f"{r['renders_per_cell_drawn']:.2f}") + \
            f" ({r['renders']}/{r['cells_drawn']})"
        out.append(f"| {r['label']} | {speed} | {'yes' if r['prefetch'] else 'no'} | {r['cells_shown']} | {ready} "
                   f"| {fmt_ms(r['blank_p50_steady_ms'])} / {fmt_ms(r['blank_p95_steady_ms'])} "
                   f"| {fmt_ms(r['blank_p95_ms'])} | {away} | {rpc} "
                   f"| {screens_text(r)} | {err_s} | {leaks} |")
    out.append("")
    out.append("Blank time: from a cell becoming visible to its last byte. Censored: a cell that scrolled away "
               "blank (or was blank when the run ended) counts its whole visible time, a lower bound, in p50/p95, "
               "and as not ready. Speeds in grid-3 rows/s (a screen is 7 rows); renders = /stats renders.total "
               "delta including prefetch renders and renders finished after the run for cancelled cells.")
    for r in runs:
        notes = []
        if r["server_extras"]:
            notes.append("server: " + ", ".join(f"{k} +{v}" for k, v in r["server_extras"].items()))
        c = r["connections"]
        opened = "not seen by the client" if c["client_opened"] is None else c["client_opened"]
        notes.append(f"cancels closed {c['cancel_closes']} connections, dropped {c['queue_drops']} queued; "
                     f"connections opened {opened} (server counted {c['server_counted']})")
        notes.append("drawn from " + (", ".join(f"{k}: {v}" for k, v in sorted(r["drawn_by_x_cache"].items(), key=str))
                                      or "nothing"))
        notes.append(f"renders {r['renders']} ({r['renders_prefetch']} prefetch"
                     + (f"; {r['renders_not_drawn']} more than cells drawn)" if r["cold_cache"] else ")"))
        q = r.get("server_queue", {})
        if q.get("max_queued") is not None:
            notes.append(f"client misses waiting for a render on the server: up to {q['max_queued']}, "
                         f"{q['queued_at_scroll_end']} when the scroll stopped")
        if r["prefetch"]:
            p = r["prefetch_calls"]
            notes.append(f"prefetch {p['posts']} jobs/{p['items']} items, {p['deletes']} stopped, "
                         f"{p['stop_all']} stop-all")
        if not r["cold_cache"]:
            notes.append("CACHE NOT COLD")
        if r["end_of_library"]:
            notes.append(f"reached the end of the library after {r['scrolled_s']} s")
        if r["client_tick_lag_max_ms"] > 50:
            notes.append(f"client ticks late up to {r['client_tick_lag_max_ms']:.0f} ms (p95 {r['client_tick_lag_p95_ms']} ms)")
        out.append(f"- {r['label']}: " + "; ".join(notes))
    return "\n".join(out)


def checks(res, what):
    """Self-test expectations; returns a list of failures."""
    bad = []
    if "all-ready" in what:
        if res["cells_drawn"] != res["cells_shown"]:
            bad.append(f"all-ready: {res['cells_drawn']} of {res['cells_shown']} cells drawn")
        if res["scrolled_away_blank"] or res["blank_at_end"]:
            bad.append("all-ready: some cells were never ready")
    if "cancel-closes" in what:
        c = res["connections"]
        if c["cancel_closes"] == 0:
            bad.append("cancel-closes: no request was cancelled on a connection")
        if c["server_counted"] != c["client_opened"]:
            bad.append(f"cancel-closes: server counted {c['server_counted']} connections, client opened {c['client_opened']}")
        if res["connections"]["pool_opened"] < c["cancel_closes"]:
            bad.append(f"cancel-closes: {c['pool_opened']} pool connections opened for {c['cancel_closes']} closes")
    if "fast-hits" in what:   # the median, as the client's own lag on a loaded machine shows in a few
        if res["blank_p50_ms"] is None or res["blank_p50_ms"] > READY_MS or not res["drawn_by_x_cache"] \
                or set(res["drawn_by_x_cache"]) - {"HIT-MEMORY", "HIT-DISK"}:
            bad.append(f"fast-hits: p50 blank {res['blank_p50_ms']} ms on a warm cache, "
                       f"drawn from {res['drawn_by_x_cache']}")
    if "no-errors" in what:
        e = res["errors"]
        if e["cell_non200"] or e["cell_broken"] or e["prefetch_failures"]:
            bad.append(f"no-errors: {e}")
    if "prefetch-calls" in what:
        p = res["prefetch_calls"]
        if not (p["posts"] and p["deletes"] and p["stop_all"]) or res["errors"]["prefetch_failures"]:
            bad.append(f"prefetch-calls: {p}, failures {res['errors']['prefetch_failure_examples']}")
    if "no-leaks" in what and res["leaks"]:
        bad.append(f"no-leaks: {res['leaks']}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="the running server, http://127.0.0.1:PORT")
    ap.add_argument("--speed", type=float, default=6.0, help="grid-3 rows per second (default 6)")
    ap.add_argument("--columns", type=int, default=3, choices=(1, 3, 5))
    ap.add_argument("--prefetch", action="store_true", help="PHCachingImageManager-style range prefetch")
    ap.add_argument("--duration", type=float, default=15.0, help="seconds of scrolling at most (default 15)")
    ap.add_argument("--switch", action="store_true", help="grid switch scenario 3 -> 5 -> 1 columns")
    ap.add_argument("--switch-seconds", type=float, default=5.0, help="seconds on each grid (default 5)")
    ap.add_argument("--final-wait", type=float, default=5.0, help="seconds the last screen may wait (default 5)")
    ap.add_argument("--drain-wait", type=float, default=60.0, help="seconds to wait for the server's renders to drain")
    ap.add_argument("--label", default="")
    ap.add_argument("--calibrate", type=int, metavar="M", help="measure renders/s with M cold GETs")
    ap.add_argument("--json-out", help="append the JSON line to this file")
    ap.add_argument("--cells-out", help="write one JSON line per cell shown to this file (times in s from "
                    "the start: visible, hidden, sent, first and last byte; state; X-Cache)")
    ap.add_argument("--table", metavar="JSONL", help="print the Markdown table of these JSON lines")
    ap.add_argument("--check", default="", help="self-test expectations, comma separated: "
                    "all-ready,cancel-closes,fast-hits,no-errors,no-leaks,prefetch-calls (exit 1 when one fails)")
    args = ap.parse_args()

    if args.table:
        with open(args.table) as f:
            print(table([json.loads(line) for line in f if line.strip()]))
        return 0
    if not args.url:
        ap.error("--url (or --table) is required")
    if args.speed <= 0 or args.speed > 200 or args.duration <= 0 or args.duration > 600 \
            or args.switch_seconds <= 0 or args.switch_seconds > 120 or not 0 <= args.final_wait <= 60 \
            or not 0 < args.drain_wait <= 600:
        ap.error("speed, durations and waits must be positive and bounded (speed <= 200, duration <= 600 s)")
    if args.calibrate is not None:
        if not 2 * POOL_SIZE < args.calibrate <= 2000:
            ap.error("--calibrate M needs 12 < M <= 2000")
        res = asyncio.run(calibrate(args))
    else:
        res = asyncio.run(scroll_run(args))
    line = json.dumps(res, sort_keys=False)
    if args.json_out:
        with open(args.json_out, "a") as f:
            f.write(line + "\n")
    print(line)
    if res["kind"] == "run":
        log(table([res]))
        bad = checks(res, args.check.split(",")) if args.check else []
        for b in bad:
            log("CHECK FAILED: " + b)
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
