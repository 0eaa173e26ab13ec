// The grid's preheat, as in Apple's `PHCachingImageManager` sample (updateCachedAssets): the
// visible rect grown by half a viewport above and below, recomputed once the view moved a third
// of a viewport; rows newly in it are warmed by a range `POST /prefetch` (from the first visible
// cell, its `focus`), jobs whose rows all left it are stopped (`DELETE /prefetch/{id}`), and a
// column or sort change stops them all (`DELETE /prefetch`) before the new grid's preheat
// starts. It reads the grid's state (gallery-grid.js: `grid`, `api`) when called, so it follows
// that script.
'use strict';

// ---- Preheat (PHCachingImageManager's sample, updateCachedAssets) through range prefetch.

const preheat = {
  rows: null,         // {start, end}: the rows of the last preheat rect
  middle: 0,          // its middle, in rows
  jobs: [],           // this page's jobs: {id, start, end (rows), epoch, stopped}
  stopping: 0,        // DELETE /prefetch under way: the new grid's preheat waits for it
  refused: false,     // 401: the server wants its admin token for prefetch
};

function updatePreheat(top, height) {
  if (preheat.refused || preheat.stopping || grid.total === null) return;
  const middle = (top + height / 2) / grid.pitch;
  if (preheat.rows && Math.abs(middle - preheat.middle) * grid.pitch <= height / 3) return;
  const wanted = {start: Math.max(0, Math.floor((top - height / 2) / grid.pitch)),
                  end: Math.min(grid.rows, Math.ceil((top + height * 1.5) / grid.pitch))};
  const had = preheat.rows || {start: wanted.start, end: wanted.start};
  const focus = Math.floor(top / grid.pitch) * grid.columns;   // the first visible cell
  for (const range of difference(wanted, had)) startJob(range, focus);
  for (const job of preheat.jobs.slice()) {
    if (job.end <= wanted.start || job.start >= wanted.end) stopJob(job);
  }
  preheat.rows = wanted;
  preheat.middle = middle;
}

/** The rows of `a` not in `b`, as at most two ranges (above and below). */
function difference(a, b) {
  if (b.end <= a.start || b.start >= a.end) return [a];
  return [{start: a.start, end: Math.min(a.end, b.start)}, {start: Math.max(a.start, b.end), end: a.end}]
    .filter(range => range.start < range.end);
}

/** A range job warmed from `focus` (the first visible cell): a rect that also covers rows
 *  above the screen (the first one after a column switch) warms the screen first. */
async function startJob(range, focus) {
  const start = range.start * grid.columns, end = Math.min(grid.total, range.end * grid.columns);
  if (start >= end) return;
  const job = {id: null, start: range.start, end: range.end, epoch: grid.epoch, stopped: false};
  preheat.jobs.push(job);
  const forget = () => { preheat.jobs = preheat.jobs.filter(j => j !== job); showPage(); };
  try {
    const response = await fetch('/prefetch', {
      method: 'POST', headers: api.headers({'Content-Type': 'application/json'}),
      body: JSON.stringify({grid: gridName(), sort: grid.sort, start, end, focus})});
    if (response.status === 401) { preheat.refused = true; return forget(); }
    if (!response.ok) return forget();
    const answer = await response.json();
    job.id = answer.id;
    if (answer.state !== 'running') return forget();
    // Its rows left, or the grid changed, while it was being posted: stop it now.
    if (job.stopped || job.epoch !== grid.epoch) { stopJob(job); forget(); }
  } catch (error) {
    forget();
  } finally {
    showPage();
  }
}

function stopJob(job) {
  job.stopped = true;
  preheat.jobs = preheat.jobs.filter(j => j !== job);
  if (job.id !== null) {
    fetch('/prefetch/' + job.id, {method: 'DELETE', headers: api.headers()}).catch(() => {});
  }
}

/** A column or sort change: every job stops (`DELETE /prefetch`); the new preheat waits for it. */
async function stopAllPrefetch() {
  for (const job of preheat.jobs) job.stopped = true;
  preheat.jobs = [];
  preheat.rows = null;
  if (preheat.refused) return;
  preheat.stopping++;
  try {
    const response = await fetch('/prefetch', {method: 'DELETE', headers: api.headers()});
    if (response.status === 401) preheat.refused = true;
  } catch (error) {
    // the server is away: the next preheat tries again
  } finally {
    preheat.stopping--;
    schedule();
  }
}

/** The admin token was given in the panel: prefetch may be tried again. */
function retryPreheat() {
  preheat.refused = false;
  preheat.rows = null;
  schedule();
}
