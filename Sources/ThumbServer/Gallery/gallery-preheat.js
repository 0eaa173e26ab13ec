// The grid's preheat, as in Apple's `PHCachingImageManager` sample (updateCachedAssets): the
// visible rect grown by half a viewport above and below, recomputed once the view moved a third
// of a viewport; rows of it no job of the page holds are warmed by a range `POST /prefetch` (from
// the first visible cell, its `focus`), jobs whose rows all left it are stopped (`DELETE
// /prefetch/{id}`), and a column or sort change stops them all (`DELETE /prefetch`) before the
// new grid's preheat starts. The rule itself is `preheatPlan`, a function of values that
// ThumbdClient's ThumbdPreheatRule follows too (one table tests both). It reads the grid's
// state (gallery-grid.js: `grid`, `api`) when called, so it follows that script.
'use strict';

// ---- Preheat (PHCachingImageManager's sample, updateCachedAssets) through range prefetch.

const preheat = {
  rows: null,         // {start, end}: the rows of the last preheat rect
  middle: 0,          // its middle, in rows
  jobs: [],           // this page's jobs: {id, start, end (rows), epoch, stopped, running}
  stopping: 0,        // DELETE /prefetch under way: the new grid's preheat waits for it
  refused: false,     // 401: the server wants its admin token for prefetch
};

/** The preheat rule, in rows, as a value: ThumbdClient's ThumbdPreheatRule follows it too, and
 *  both are tested against one table (Tests/Fixtures/preheat-cases.json). `state` is
 *  {rows, middle, jobs}; the view's top is at `top` rows (fractional) and it is `height` rows
 *  high, over a grid of `rows` rows, `columns` a row, `total` items. The rect is
 *  floor(top - height/2) ..< ceil(top + height + height/2), recomputed only when its middle moved
 *  more than height/3 (the first one always); rows of it that no job holds start one job per
 *  contiguous run, warmed from the first visible cell (`focus`); jobs with no row left in it
 *  stop. A job holds its rows until it is stopped, finished or not. Updates `state` and returns
 *  {start: [{start, end (rows), items: [first, end), focus}], stop: [jobs]}. */
function preheatPlan(state, top, height, rows, columns, total) {
  const plan = {start: [], stop: []};
  const middle = top + height / 2;
  if (state.rows && Math.abs(middle - state.middle) <= height / 3) return plan;
  const lower = Math.max(0, Math.floor(top - height / 2));
  const wanted = {start: lower, end: Math.max(lower, Math.min(rows, Math.ceil(top + height + height / 2)))};
  const focus = Math.min(total, Math.max(0, Math.floor(top)) * columns);
  const held = row => state.jobs.some(job => job.start <= row && row < job.end);
  for (let row = wanted.start; row < wanted.end;) {
    if (held(row)) { row++; continue; }
    let end = row + 1;
    while (end < wanted.end && !held(end)) end++;
    plan.start.push({start: row, end, items: [row * columns, Math.min(total, end * columns)], focus});
    row = end;
  }
  const overlaps = job => job.start < wanted.end && wanted.start < job.end;
  plan.stop = state.jobs.filter(job => !overlaps(job));
  state.jobs = state.jobs.filter(overlaps).concat(plan.start);
  state.rows = wanted;
  state.middle = middle;
  return plan;
}

/** A job that could not start: its rows are free again for a later update. */
function preheatForget(state, job) {
  state.jobs = state.jobs.filter(j => j !== job);
}

function updatePreheat(top, height) {
  if (preheat.refused || preheat.stopping || grid.total === null || !grid.pitch) return;
  const plan = preheatPlan(preheat, top / grid.pitch, height / grid.pitch, grid.rows, grid.columns, grid.total);
  for (const job of plan.start) startJob(job);
  for (const job of plan.stop) stopJob(job);
}

/** A range job of the plan, warmed from its `focus` (the first visible cell): a rect that also
 *  covers rows above the screen (the first one after a column switch) warms the screen first. */
async function startJob(job) {
  const [start, end] = job.items;
  Object.assign(job, {id: null, epoch: grid.epoch, stopped: false, running: true});
  if (start >= end) return;
  const forget = () => { job.running = false; preheatForget(preheat, job); showPage(); };
  try {
    const response = await fetch('/prefetch', {
      method: 'POST', headers: api.headers({'Content-Type': 'application/json'}),
      body: JSON.stringify({grid: gridName(), sort: grid.sort, start, end, focus: job.focus})});
    if (response.status === 401) { preheat.refused = true; return forget(); }
    if (!response.ok) return forget();
    const answer = await response.json();
    job.id = answer.id;
    // Done at once (all cached): it still holds its rows, with nothing to stop.
    if (answer.state !== 'running') job.running = false;
    // Its rows left, or the grid changed, while it was being posted: stop it now.
    if (job.stopped || job.epoch !== grid.epoch) { stopJob(job); preheatForget(preheat, job); }
  } catch (error) {
    forget();
  } finally {
    showPage();
  }
}

function stopJob(job) {
  job.stopped = true;
  preheat.jobs = preheat.jobs.filter(j => j !== job);
  if (job.id !== null && job.running) {
    job.running = false;
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
