#!/usr/bin/env python3
"""Browser tests of the gallery as the reference client of a phone photo grid (GET /), in
headless Chromium: the virtual grid, the preheat through range prefetch, cancellation, the column
and sort changes and the stats panel, each checked against what the server says.

The library is made of the fixture photos hard-linked under many names (2,000 and more, so the
page scrolls), with names that need encoding (space, '#', '%', '+', a Latin-1 byte) sorted first
in each photo's group. The photos' copies get mtimes a day apart, so those without an EXIF date
sort apart too.

- grid_shows_the_right_thumbnails_in_few_elements: at the top and after scrolling, every cell in
  view holds a decoded image of the grid shown (its natural size is the server's thumbnail's,
  and the README's size for the grid); the listing's versioned URLs are used; the DOM holds a
  few rows of cells, not the library.
- preheat_prefetches_rows_ahead_and_stops_those_left_behind: the POST /prefetch ranges are
  exactly the preheat rect's rows (visible rect grown by half a viewport each way), rows no
  job of the page holds only, recomputed after a third of a viewport and not before; jobs whose rows
  all left are stopped with DELETE /prefetch/{id}; each range is a job on the server.
- preheat_plan_follows_the_shared_table: the page's preheatPlan (gallery-preheat.js) gives, for
  each scroll position of Tests/Fixtures/preheat-cases.json, the prefetch starts and stops the
  table says, as ThumbdClient's ThumbdPreheatRule does (ThumbdPreheatRuleTests).
- column_switch_stops_all_prefetch_first: a switch sends DELETE /prefetch, which cancels the
  running jobs on the server, and only after its answer the new grid's preheat; the view then
  shows the new grid's thumbnails from the same place in the listing.
- sort_order_changes_the_first_cells: newest and oldest start with different cells, each the
  start of /assets in that order, names that need encoding included.
- stats_panel_matches_stats: every number in the panel lies between two /stats read around it.
- scrolled_away_thumbnails_are_cancelled: with thumbd frozen (SIGSTOP), cells scrolled away while
  their thumbnails were under way are aborted (DevTools: canceled) and those still waiting are
  never sent (neither DevTools nor thumbd's access log saw them); cells scrolled back into view
  load from the browser's cache while the server is still frozen.
- stats_panel_asks_for_the_admin_token: with admin_token set, the panel says so (and thumbnails
  still load); once the token is typed in, the panel is live and prefetch runs.
- the_listing_asks_for_a_client_key: with client_keys set, the listing's 401 shows the key field
  (and it stays while /stats answers); once a client key is typed in, the grid loads.
"""

import json
import os
import shutil
import struct
import tempfile
import time

from harness import NO_BACKFILL, PHOTOS, ROOT, Failure, NetworkLog, Server, at_end, browser, check, main, wait_for

GRIDS = {"1": (1179, 2358, "contain"), "3": (393, 393, "cover"), "5": (236, 236, "cover")}   # README, "Grids"


def photo_library(count):
    """`count` hard links of the fixture photos, plus two names that need encoding per photo."""
    def fill(library):
        sources = os.path.join(os.path.dirname(library), "sources")
        os.mkdir(sources)
        names = sorted(os.listdir(PHOTOS))
        now = time.time()
        copies = []
        for k, name in enumerate(names):
            copy = os.path.join(sources, name)
            shutil.copyfile(os.path.join(PHOTOS, name), copy)
            os.utime(copy, (now - 86400 * (k + 1), now - 86400 * (k + 1)))
            copies.append(copy)
        for i in range(count):
            os.link(copies[i % len(copies)], os.path.join(library, "n%04d-%s" % (i, names[i % len(names)])))
        for k, copy in enumerate(copies):
            os.link(copy, os.path.join(library, "# %d 100%% a+b.jpg" % k))
            os.link(copy, os.path.join(os.fsencode(library), b"#\xe9 latin-1 %d.jpg" % k))
    return fill


def image_size(data):
    """(width, height) from a JPEG's SOF, a PNG's IHDR or a WebP's header."""
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return struct.unpack(">II", data[16:24])
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        if data[12:16] == b"VP8X":
            return (1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little"))
        if data[12:16] == b"VP8 ":
            w, h = struct.unpack("<HH", data[26:30])
            return (w & 0x3FFF, h & 0x3FFF)
        bits = int.from_bytes(data[21:25], "little")
        return (1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF))
    check(data[:2] == b"\xff\xd8", "not an image: %r" % data[:16])
    i = 2
    while i + 9 < len(data):
        marker = data[i + 1]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            return (width, height)
        i += 2 + struct.unpack(">H", data[i + 2:i + 4])[0]
    raise Failure("a JPEG without a frame header")


def expected_size(grid, width, height):
    """The README's thumbnail size for a source of width x height (as displayed)."""
    box_width, box_height, fit = GRIDS[grid]
    if fit == "cover":
        side = min(box_width, width, height)
        return (side, side)
    scale = min(box_width / width, box_height / height, 1)
    return (round(width * scale), round(height * scale))


CELLS = """
    const box = document.getElementById('scroller');
    const top = box.getBoundingClientRect().top, bottom = top + box.clientHeight;
    return [...document.querySelectorAll('#grid .cell')].map(cell => {
      const r = cell.getBoundingClientRect(), img = cell.querySelector('img');
      return {index: Number(cell.dataset.index), url: cell.dataset.url || null, state: cell.dataset.state || null,
              alt: img.alt, width: img.naturalWidth, height: img.naturalHeight, complete: img.complete,
              top: r.top - top, left: r.left, size: r.width, visible: r.bottom > top + 1 && r.top < bottom - 1};
    });
"""


class Page:
    """The gallery in one browser tab, with its network log."""

    def __init__(self, server, driver):
        self.server, self.driver = server, driver
        self.network = NetworkLog(driver)
        self.sizes = {}

    def open(self):
        self.driver.get(self.server.base + "/")
        self.network.poll()
        return self.loaded()

    def js(self, script, *arguments):
        return self.driver.execute_script(script, *arguments)

    def job(self, job_id):
        """Prefetch job `job_id` as the page's own client sees it (its `Thumbd-Client-Id`: a job
        is another client's 404)."""
        return self.server.json("GET", "/prefetch/%d" % job_id, headers={"Thumbd-Client-Id": self.js("return api.client")})

    def cells(self):
        return self.js(CELLS)

    def visible(self):
        return [cell for cell in self.cells() if cell["visible"]]

    def loaded(self, seconds=30):
        """The cells in view once every one holds its decoded thumbnail."""
        def probe():
            cells = self.visible()
            failed = [c for c in cells if c["state"] == "failed"]
            check(not failed, "cells failed to load: %s" % failed[:3])
            return cells if cells and all(c["state"] == "loaded" and c["complete"] and c["width"] > 0
                                          for c in cells) else None
        return wait_for("every cell in view loaded", seconds, probe)

    def geometry(self):
        """(viewport height, row pitch, columns) in CSS px."""
        cells = self.cells()
        columns = len([c for c in cells if c["top"] == cells[0]["top"]])
        rows = sorted({c["top"] for c in cells})
        pitch = rows[1] - rows[0] if len(rows) > 1 else cells[0]["size"] + 2
        return self.js("return document.getElementById('scroller').clientHeight"), pitch, columns

    def scroll_to(self, y):
        self.js("document.getElementById('scroller').scrollTop = arguments[0]", y)

    def scroll_top(self):
        return self.js("return document.getElementById('scroller').scrollTop")

    def click(self, selector):
        self.js("document.querySelector(arguments[0]).click()", selector)

    def server_size(self, url):
        """The natural size of what thumbd sends for `url` (with the Accept of the page's fetch)."""
        if url not in self.sizes:
            status, _, data = self.server.request("GET", url)
            check(status == 200, "GET %s answered %d" % (url, status))
            self.sizes[url] = image_size(data)
        return self.sizes[url]

    def check_cells(self, cells, grid, sort="newest"):
        """Each cell shows its listing item's versioned URL for `grid`, decoded at the right size."""
        first = min(c["index"] for c in cells)
        listing = self.server.listing(sort=sort, offset=first, limit=max(c["index"] for c in cells) - first + 1)
        for cell in cells:
            item = listing["items"][cell["index"] - first]
            check(cell["url"] == item["thumbnails"][grid],
                  "cell %d shows %s, the listing gives %s" % (cell["index"], cell["url"], item["thumbnails"][grid]))
            check(cell["alt"] == item["path"], "cell %d is labelled %r, not %r" % (cell["index"], cell["alt"], item["path"]))
            shown = (cell["width"], cell["height"])
            check(shown == self.server_size(cell["url"]), "cell %d (%s) decoded at %s, thumbd sends %s"
                  % (cell["index"], cell["url"], shown, self.server_size(cell["url"])))
            wanted = expected_size(grid, item["width"], item["height"])
            check(abs(shown[0] - wanted[0]) <= 1 and abs(shown[1] - wanted[1]) <= 1,
                  "cell %d (%s, %dx%d) decoded at %s; grid %s gives %s"
                  % (cell["index"], item["path"], item["width"], item["height"], shown, grid, wanted))

    def since(self, mark, method, path_prefix):
        """Requests sent after `mark` (a `mark()`) of `method` to paths starting with `path_prefix`."""
        later = {id(r) for r in self.network.poll()[mark:]}
        return [r for r in self.network.matching(method, path_prefix) if id(r) in later]

    def prefetch_posts(self, mark=0):
        posts = self.since(mark, "POST", "/prefetch")
        for post in posts:
            post["range"] = json.loads(post["body"])
        return posts

    def job_of(self, post):
        """The job thumbd answered a POST /prefetch with (the body Chromium kept)."""
        wait_for("the answer to POST /prefetch", 10, lambda: self.network.poll() and post["status"])
        check(post["status"] == 202, "POST /prefetch %s answered %s" % (post["body"], post["status"]))
        return json.loads(self.network.response_body(post))

    def mark(self):
        """A point in the network log: what `since` and `prefetch_posts` count from."""
        return len(self.network.poll())

    def quiet(self):
        """Waits for the page and the server to be idle: nothing loading, no prefetch left."""
        def probe():
            loads = self.js("return [document.getElementById('page-loading').textContent,"
                            " document.getElementById('page-waiting').textContent]")
            stats = self.server.stats()
            return loads == ["0", "0"] and stats["prefetch"]["queued"] == 0 and stats["renders"]["in_flight"] == 0
        wait_for("the page and thumbd idle", 30, probe, interval=0.3)


class Session:
    """One thumbd with 2,012 assets and one browser, shared by the grid tests (each opens the page
    afresh): starting them once keeps the run short."""
    shared = None

    @classmethod
    def page(cls, binary):
        if cls.shared is None:
            cls.shared = cls(binary)
            at_end(cls.shared.close)
        return cls.shared.gallery

    def __init__(self, binary):
        self.server = Server(binary, photo_library(2000), arguments=NO_BACKFILL)
        self.profile = tempfile.mkdtemp(prefix="thumbd-chromium-")
        self.driver = browser(self.profile)
        self.gallery = Page(self.server, self.driver)

    def close(self):
        self.driver.quit()
        self.server.stop()
        shutil.rmtree(self.profile, ignore_errors=True)


def grid_shows_the_right_thumbnails_in_few_elements(binary, profile):
    page = Session.page(binary)
    cells = page.open()
    total = page.server.listing(limit=0)["total"]
    check(total > 2000, "the library lists %d assets" % total)
    # Counted by type once the page has walked the listing: "N photos" (no videos here).
    wait_for("the header's count", 10, lambda: page.js("return document.getElementById('total').textContent")
             == "{:,} photos".format(total))
    height, pitch, columns = page.geometry()
    check(columns == 3, "the page opened with %d columns, not 3" % columns)
    for y in [0, height, 3 * height, 40 * height, 200 * pitch]:
        page.scroll_to(y)
        cells = page.loaded()
        page.check_cells(cells, "3")
        in_dom = len(page.cells())
        check(in_dom < 60, "%d cell elements in the DOM for %d assets (%d in view)" % (in_dom, total, len(cells)))
        rows = set(c["index"] // 3 for c in page.cells())
        check(max(rows) - min(rows) + 1 == len(rows), "the rows in the DOM are not contiguous: %s" % sorted(rows))
    spacer = page.js("return document.getElementById('grid').offsetHeight")
    check(abs(spacer - (total + 2) // 3 * pitch) < pitch, "the spacer is %d px for %d rows of %.1f px"
          % (spacer, (total + 2) // 3, pitch))
    check(any(c["alt"].startswith("#") for c in page.open()), "the first cells are not the names that need encoding")


def preheat_prefetches_rows_ahead_and_stops_those_left_behind(binary, profile):
    page = Session.page(binary)
    started = page.mark()
    page.open()
    total = page.server.listing(limit=0)["total"]
    height, pitch, columns = page.geometry()
    rows = (total + columns - 1) // columns

    def rect(top):
        """The preheat rect's rows for a view at `top` px (README: half a viewport each way)."""
        return max(0, int((top - height / 2) // pitch)), min(rows, -int(-(top + 1.5 * height) // pitch))

    def new_posts(since, count):
        return wait_for("%d POST /prefetch" % count, 10,
                        lambda: (lambda p: p if len(p) >= count else None)(page.prefetch_posts(since)))

    def as_rows(post):
        r = post["range"]
        check(r["grid"] == "3" and r["sort"] == "newest", "prefetch %s is not for grid 3, newest" % post["body"])
        check(r["start"] % columns == 0 and r["start"] < r["end"] <= total, "prefetch %s is not whole rows" % post["body"])
        return r["start"] // columns, -(-r["end"] // columns)

    posts = new_posts(started, 1)
    first = as_rows(posts[0])
    visible = page.visible()
    check(len(posts) == 1 and first == rect(0), "at the top the page prefetched rows %s, the preheat rect is rows %s"
          % ([as_rows(p) for p in posts], rect(0)))
    last_visible_row = max(c["index"] for c in visible) // columns
    check(first[1] > last_visible_row + 1, "the prefetch (rows %s) does not reach below the view (last row %d)"
          % (first, last_visible_row))
    jobs = [page.job_of(posts[0])]

    # Into rows no test has shown yet (so their jobs run a while): the whole rect is new.
    mark = page.mark()
    fresh = 500 * pitch
    page.scroll_to(fresh)
    page.loaded()
    jumped = new_posts(mark, 1)
    check([as_rows(p) for p in jumped] == [rect(fresh)], "after a jump the page prefetched rows %s, the rect is rows %s"
          % ([as_rows(p) for p in jumped], rect(fresh)))
    # ... warmed from the first visible cell (the rect starts half a viewport above it)
    check(jumped[0]["range"].get("focus") == int(fresh // pitch) * columns,
          "after a jump the prefetch's focus is %r, the first visible cell %d"
          % (jumped[0]["range"].get("focus"), int(fresh // pitch) * columns))
    jobs.append(page.job_of(jumped[0]))

    # One viewport down: only the rows newly in the rect are asked for.
    mark = page.mark()
    page.scroll_to(fresh + height)
    page.loaded()
    moved = new_posts(mark, 1)
    check([as_rows(p) for p in moved] == [(rect(fresh)[1], rect(fresh + height)[1])],
          "after a viewport down the page prefetched rows %s, newly in the rect are rows %s"
          % ([as_rows(p) for p in moved], (rect(fresh)[1], rect(fresh + height)[1])))
    jobs.append(page.job_of(moved[0]))

    # Less than a third of a viewport further: no new preheat.
    mark = page.mark()
    page.scroll_to(fresh + height + height / 4)
    time.sleep(0.8)
    check(not page.prefetch_posts(mark), "a quarter viewport's scroll prefetched again: %s"
          % [p["body"] for p in page.prefetch_posts(mark)])

    # Far down: the rect's rows come in one range, and the jobs left behind are stopped.
    mark = page.mark()
    far = 60 * height
    page.scroll_to(far)
    page.loaded()
    far_posts = new_posts(mark, 1)
    check([as_rows(p) for p in far_posts] == [rect(far)], "far down the page prefetched rows %s, the rect is rows %s"
          % ([as_rows(p) for p in far_posts], rect(far)))
    running = {job["id"] for job in jobs if job["state"] == "running"}
    check(running, "no job was running when posted: nothing to stop")
    stopped = wait_for("DELETE /prefetch/{id} of the jobs left behind", 10, lambda: (lambda ids: ids if running <= ids
                       else None)({int(r["url"].rsplit("/", 1)[1]) for r in page.since(started, "DELETE", "/prefetch/")}))
    far_job = page.job_of(far_posts[0])
    check(far_job["id"] not in stopped, "the job of the rows in view (%d) was stopped" % far_job["id"])
    # Each range is a job of that many items on the server; the stopped ones ended.
    for post in posts + jumped + moved + far_posts:
        job = page.job_of(post)
        on_server = page.job(job["id"])
        r = post["range"]
        check(on_server["total"] == r["end"] - r["start"], "job %d holds %d items for the range %s"
              % (job["id"], on_server["total"], post["body"]))
        if job["id"] in stopped:
            check(on_server["state"] in ("cancelled", "done"), "stopped job %d is %s" % (job["id"], on_server["state"]))


PREHEAT_TABLE_RUNNER = """
    const table = arguments[0], failures = [];
    for (const c of table.cases) {
      const state = {rows: null, middle: 0, jobs: []};
      const rows = Math.ceil(c.items / c.columns);
      c.steps.forEach((step, number) => {
        if (step.reset) { state.rows = null; state.jobs = []; return; }
        if (step.failed) {
          const job = state.jobs.find(j => j.start === step.failed[0] && j.end === step.failed[1]);
          if (job) preheatForget(state, job);
          return;
        }
        const plan = preheatPlan(state, step.top, step.height, rows, c.columns, c.items);
        const start = JSON.stringify(plan.start.map(j => ({rows: [j.start, j.end], items: j.items, focus: j.focus})));
        const stop = JSON.stringify(plan.stop.map(j => [j.start, j.end]));
        // The table's objects, keys in the same order (Selenium may hand them over sorted).
        const wanted = JSON.stringify(step.start.map(j => ({rows: j.rows, items: j.items, focus: j.focus})));
        if (start !== wanted || stop !== JSON.stringify(step.stop)) {
          failures.push(c.name + ', step ' + number + ' (top ' + step.top + '): start ' + start + ', stop ' + stop);
        }
      });
    }
    return failures;
"""


def preheat_plan_follows_the_shared_table(binary, profile):
    """gallery-preheat.js' preheatPlan against Tests/Fixtures/preheat-cases.json, the table
    ThumbdClient's ThumbdPreheatRule is tested against (ThumbdPreheatRuleTests): the page's own
    function, run in Chromium on each case's scroll positions."""
    page = Session.page(binary)
    page.open()
    with open(os.path.join(ROOT, "Tests", "Fixtures", "preheat-cases.json")) as f:
        table = json.load(f)
    check(len(table["cases"]) >= 7, "the table holds %d cases" % len(table["cases"]))
    failures = page.js(PREHEAT_TABLE_RUNNER, table)
    check(not failures, "preheatPlan differs from the table: " + "; ".join(failures))


def column_switch_stops_all_prefetch_first(binary, profile):
    page = Session.page(binary)
    page.open()
    height, pitch, _ = page.geometry()
    # Jump into rows nothing has warmed, so their prefetch is still running at the switch.
    running = []
    for attempt in range(4):
        mark = page.mark()
        page.scroll_to((100 + 40 * attempt) * height)
        posts = wait_for("the preheat of a fresh region", 10, lambda: page.prefetch_posts(mark) or None)
        for post in posts:
            job = page.job(page.job_of(post)["id"])
            left = job["total"] - job["done"] - job["skipped"] - job["failed"] - job["not_stored"] - job["cancelled"]
            # Enough left that it cannot finish in the moment before thumbd is frozen below
            # (prefetch renders a fixture photo in about 10 ms on each of the workers).
            if job["state"] == "running" and left >= 12:
                running.append(job["id"])
                break
        if running:
            break
    # thumbd frozen at once, from before the click until the DELETE is on its way: the jobs
    # cannot finish first.
    if running:
        page.server.pause()
    check(running, "no prefetch job was still running to be stopped")
    try:
        anchor = min(c["index"] for c in page.visible())
        mark = page.mark()
        page.click('[data-columns="5"]')
        wait_for("DELETE /prefetch sent", 10, lambda: [r for r in page.since(mark, "DELETE", "/prefetch")
                                                       if r["url"].endswith("/prefetch")])
    finally:
        page.server.resume()
    cells = page.loaded()
    page.check_cells(cells, "5")
    check(min(c["index"] for c in cells) == anchor // 5 * 5, "after the switch the view starts at %d, before at %d"
          % (min(c["index"] for c in cells), anchor))
    in_row = len([c for c in cells if c["top"] == cells[0]["top"]])
    check(in_row == 5, "%d cells in a row at 5 columns" % in_row)
    stop_all = [r for r in page.since(mark, "DELETE", "/prefetch") if r["url"].endswith("/prefetch")]
    check(len(stop_all) == 1, "the switch sent %d DELETE /prefetch" % len(stop_all))
    for job_id in running:
        state = page.job(job_id)["state"]
        check(state == "cancelled", "job %d, running at the switch, is %s" % (job_id, state))
    new_posts = wait_for("the new grid's preheat", 10, lambda: page.prefetch_posts(mark) or None)
    check(all(p["range"]["grid"] == "5" for p in new_posts), "after the switch: %s" % [p["body"] for p in new_posts])
    check(new_posts[0]["sent"] >= stop_all[0]["answered"], "the new grid's prefetch went out before DELETE /prefetch "
          "was answered (it could have been stopped by it)")
    for post in new_posts:
        job = page.job(page.job_of(post)["id"])
        check(job["state"] != "cancelled", "the new grid's job %d was cancelled" % job["id"])
    check(len(page.cells()) < 100, "%d cell elements at 5 columns" % len(page.cells()))

    mark = page.mark()
    page.click('[data-columns="1"]')
    cells = page.loaded()
    page.check_cells(cells, "1")
    check(any(r["url"].endswith("/prefetch") for r in page.since(mark, "DELETE", "/prefetch")),
          "the switch to 1 column sent no DELETE /prefetch")
    check(all(p["range"]["grid"] == "1" for p in page.prefetch_posts(mark)), "1 column prefetched another grid")


def sort_order_changes_the_first_cells(binary, profile):
    page = Session.page(binary)
    page.open()
    newest = sorted(page.visible(), key=lambda c: c["index"])
    page.check_cells(newest, "3", sort="newest")
    expected = [item["thumbnails"]["3"] for item in page.server.listing(sort="newest", limit=3)["items"]]
    check([c["url"] for c in newest[:3]] == expected, "newest starts with %s, /assets with %s"
          % ([c["url"] for c in newest[:3]], expected))
    check(any("%" in c["url"].split("/")[-1] and "#" in c["alt"] for c in newest[:3]),
          "no name with '#' and escapes among the first cells: %s" % [c["alt"] for c in newest[:3]])
    check(any("%E9" in c["url"] for c in newest), "no Latin-1 name in view: %s" % [c["url"] for c in newest])
    mark = page.mark()
    page.click('[data-sort="oldest"]')
    oldest = wait_for("the oldest cells", 30, lambda: (lambda cells: cells if cells[0]["url"] != newest[0]["url"]
                                                       else None)(sorted(page.loaded(), key=lambda c: c["index"])))
    page.check_cells(oldest, "3", sort="oldest")
    expected = [item["thumbnails"]["3"] for item in page.server.listing(sort="oldest", limit=3)["items"]]
    check([c["url"] for c in oldest[:3]] == expected, "oldest starts with %s, /assets with %s"
          % ([c["url"] for c in oldest[:3]], expected))
    check({c["url"] for c in oldest[:3]}.isdisjoint(c["url"] for c in newest[:3]), "newest and oldest start alike")
    check(oldest[0]["index"] == 0 and page.scroll_top() == 0, "a sort change did not go back to the top")
    check(any(r["url"].endswith("/prefetch") for r in page.since(mark, "DELETE", "/prefetch")),
          "the sort change sent no DELETE /prefetch")
    posts = wait_for("the oldest preheat", 10, lambda: page.prefetch_posts(mark) or None)
    check(all(p["range"]["sort"] == "oldest" for p in posts), "after the sort change: %s" % [p["body"] for p in posts])


def parse_shown(text, unit):
    """A panel value back as a number in /stats' units."""
    text = text.replace(",", "").strip()
    if unit == "ratio":
        return float(text.rstrip(" %")) / 100
    if unit == "ms":
        return float(text.rstrip(" ms"))
    if unit == "bytes":
        number, scale = text.split()
        return float(number) * {"KiB": 1024, "MiB": 1024 ** 2}[scale]
    if unit == "seconds":
        parts = text.split()
        return sum(float(n) * {"h": 3600, "min": 60, "s": 1}[u] for n, u in zip(parts[::2], parts[1::2]))
    return int(text)


def stat_of(stats, key):
    if key == "hit_ratio":
        lookups = stats["memory_cache"]["hits"] + stats["memory_cache"]["misses"]
        return (stats["memory_cache"]["hits"] + stats["disk_cache"]["hits"]) / lookups
    for part in key.split("."):
        stats = stats[part]
    return stats


def stats_panel_matches_stats(binary, profile):
    page = Session.page(binary)
    page.open()
    page.scroll_to(300 * page.geometry()[1])
    page.loaded()
    page.quiet()
    before = page.server.stats()
    time.sleep(2.3)   # the panel reads /stats every second
    shown = page.js("""return [...document.querySelectorAll('#stats-body [data-stat]')]
                         .map(e => [e.dataset.stat, e.dataset.unit || '', e.textContent])""")
    after = page.server.stats()
    check(page.js("return document.getElementById('stats-state').textContent") == "live", "the panel is not live")
    keys = {key for key, _, _ in shown}
    for needed in ["memory_cache.hits", "disk_cache.hits", "hit_ratio", "renders.total", "renders.latency_ms.p50",
                   "renders.latency_ms.p95", "prefetch.jobs", "prefetch.queued", "prefetch.done", "prefetch.cancelled"]:
        check(needed in keys, "the panel does not show %s" % needed)
    check(stat_of(after, "memory_cache.hits") + stat_of(after, "disk_cache.hits") > 0 and stat_of(after, "renders.total") > 0,
          "nothing happened: %s" % after)
    slack = {"ratio": 0.0006, "ms": 0.06, "bytes": 0.06 * 1024 ** 2, "seconds": 1.5}
    for key, unit, text in shown:
        value = parse_shown(text, unit)
        low, high = sorted([stat_of(before, key), stat_of(after, key)])
        room = slack.get(unit, 0)
        if unit == "bytes" and value < 1024 ** 2:
            room = 0.06 * 1024
        check(low - room <= value <= high + room, "the panel shows %s = %r, /stats said %r then %r"
              % (key, text, stat_of(before, key), stat_of(after, key)))
    chart = page.js("return document.getElementById('chart-renders').getAttribute('d') || ''")
    check(chart.count("L") >= 1, "the chart has no line: %r" % chart)


def scrolled_away_thumbnails_are_cancelled(binary, profile):
    server = Server(binary, photo_library(600))
    driver = browser(profile)
    try:
        page = Page(server, driver)
        page.open()
        height, pitch, _ = page.geometry()
        server.pause()
        try:
            mark = page.mark()
            page.scroll_to(25 * pitch)   # rows still in the first listing page, whose thumbnails nothing fetched yet
            def stuck():
                cells = page.visible()
                loading = [c for c in cells if c["state"] == "loading"]
                waiting = [c for c in cells if c["state"] == "waiting"]
                return (loading, waiting) if len(loading) == 4 and waiting else None
            loading, waiting = wait_for("4 thumbnails under way and more waiting", 10, stuck)
            page.scroll_to(0)
            time.sleep(0.5)
            urls = {c["url"] for c in page.cells()}
            check(not urls & {c["url"] for c in loading + waiting}, "cells scrolled away are still in the DOM")
            cached = page.loaded(seconds=10)   # from the browser's cache: the server is frozen
        finally:
            server.resume()
        page.check_cells(cached, "3")
        time.sleep(1)   # thumbd reads what reached its sockets while it was frozen
        sent = {r["url"].split("//", 1)[1].split("/", 1)[1]: r for r in page.network.poll()[mark:]}
        for cell in loading:
            record = sent.get(cell["url"].lstrip("/"))
            check(record is not None, "thumbnail %s was under way, DevTools never saw it sent" % cell["url"])
            check(record["canceled"] and record["failed"] == "net::ERR_ABORTED",
                  "thumbnail %s, scrolled away under way, was not aborted: %s" % (cell["url"], record))
        log = "".join(server.thumbnail_requests())
        for cell in waiting:
            check(cell["url"].lstrip("/") not in sent, "thumbnail %s, scrolled away waiting, was sent" % cell["url"])
            check(" " + cell["url"] + " " not in log, "thumbd received %s, scrolled away before it was sent"
                  % cell["url"])
        counted = [int(page.js("return document.getElementById(arguments[0]).textContent", which).replace(",", ""))
                   for which in ["page-aborted", "page-unsent"]]
        check(counted[0] >= len(loading) and counted[1] >= len(waiting),
              "the panel counts %s aborted and %s unsent for %d and %d" % (*counted, len(loading), len(waiting)))
    finally:
        driver.quit()
        server.stop()


def stats_panel_asks_for_the_admin_token(binary, profile):
    server = Server(binary, photo_library(30), arguments=["--admin-token", "s3cret"])
    driver = browser(profile)
    try:
        page = Page(server, driver)
        page.open()   # thumbnails need no token
        text = lambda element: page.js("return document.getElementById(arguments[0]).textContent", element)
        wait_for("the panel's 401 note", 10, lambda: "admin token" in text("stats-state"))
        check(page.js("return !document.getElementById('stats-refused').hidden"
                      " && document.getElementById('stats-body').hidden"), "the panel shows no token field")
        check(text("page-preheat") == "off: needs the admin token", "preheat: %r" % text("page-preheat"))
        check(any(r["status"] == 401 for r in page.network.matching("POST", "/prefetch")), "no prefetch was refused")
        page.js("document.getElementById('token').value = 's3cret';"
                "document.getElementById('token-form').requestSubmit()")
        wait_for("the live panel", 10, lambda: text("stats-state") == "live")
        assets = page.js("return document.querySelector('[data-stat=\"library.assets\"]').textContent")
        check(assets == str(server.listing(limit=0)["total"]), "the panel shows %s assets" % assets)
        wait_for("a prefetch with the token", 10,
                 lambda: any(r["status"] == 202 for r in page.network.matching("POST", "/prefetch")))
        check(server.stats()["prefetch"]["jobs"] >= 1, "no prefetch job on the server")
    finally:
        driver.quit()
        server.stop()


def the_listing_asks_for_a_client_key(binary, profile):
    key = "the-app's-key"
    server = Server(binary, photo_library(30), client_key=key)
    driver = browser(profile)
    try:
        page = Page(server, driver)
        driver.get(server.base + "/")
        text = lambda element: page.js("return document.getElementById(arguments[0]).textContent", element)
        wait_for("the listing's 401 note", 10, lambda: "needs a key" in text("status"))
        time.sleep(1.5)   # /stats, open here, has answered again since: the field must stay
        check(page.js("return !document.getElementById('stats-refused').hidden"), "the panel shows no key field")
        check(page.cells() == [] or all(c["state"] != "loaded" for c in page.cells()), "cells loaded without a key")
        page.js("document.getElementById('token').value = arguments[0];"
                "document.getElementById('token-form').requestSubmit()", key)
        cells = page.loaded()
        check(len(cells) >= 6, "only %d cells in view once the key was given" % len(cells))
        page.network.poll()
        listed = [r["status"] for r in page.network.matching("GET", "/assets")]
        check(401 in listed and 200 in listed, "the listing's answers: %s" % listed)
    finally:
        driver.quit()
        server.stop()


TESTS = [grid_shows_the_right_thumbnails_in_few_elements, preheat_prefetches_rows_ahead_and_stops_those_left_behind,
         preheat_plan_follows_the_shared_table,
         column_switch_stops_all_prefetch_first, sort_order_changes_the_first_cells, stats_panel_matches_stats,
         scrolled_away_thumbnails_are_cancelled, stats_panel_asks_for_the_admin_token, the_listing_asks_for_a_client_key]

if __name__ == "__main__":
    main(TESTS)
