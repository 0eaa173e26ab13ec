// The grid's JavaScript. A virtual grid over the whole listing: at 3 and 5 columns square cells
// of width / columns, the grid's width at most that where 3 columns show 3.4 rows (3 whole and
// part of a 4th: a wide screen gets a grid about 0.88 times as wide as the view is tall,
// centred); at 1 column rows as tall as the view is wide, at most the view's height, each photo
// shown whole at its aspect ratio (the listing's width/height) inside its row. Only the rows in
// the viewport and one beyond each edge are elements, in a spacer as tall as all the rows (at
// most 15 million px; a taller grid scrolls scaled). The listing comes in pages of 150 items as
// the scroll needs them (an answer of 503 `index_building` is asked again after 150 ms, then 1.5
// times later each time up to its Retry-After). Each cell fetches the versioned URL its item
// lists for the grid (`item.thumbnails[grid]`, never a URL built here), at most 4 at a time
// (Chromium opens 6 connections per host: 2 stay free for `/assets`, `/prefetch` and `/stats`),
// over the item's placeholder (gallery-placeholder.js), painted as its page of the listing
// arrives, which the thumbnail fades in over. A cell asks only once the view has settled on it,
// as UICollectionView's prefetching does: its row has been in the DOM for 100 ms while the view
// moves slower than 0.3 viewports a second, or the view has not moved for 100 ms; so a fling
// asks for nothing it flies past. A cell that leaves before its thumbnail arrived is
// cancelled: a waiting fetch is never sent, one under way is aborted (`AbortController`;
// Chromium then closes its connection, where removing or blanking an `<img>` let queued requests
// go out anyway). Each frame it asks the preheat (gallery-preheat.js) to follow the view, and a
// column or sort change stops every job first.
'use strict';

const api = {
  /** The key typed into the panel (kept in memory only): the admin_token, for /prefetch and
   *  /stats, or with client_keys a client key, for the listing and /prefetch. */
  token: '',
  /** Whether the listing's last answer was 401 (client_keys): the key field stays shown. */
  listingNeedsKey: false,
  /** This page's own id (`Thumbd-Client-Id`): its `DELETE /prefetch` stops its own jobs, not
   *  those of another tab or phone. */
  client: 'gallery-' + Math.random().toString(36).slice(2, 12),
  headers(extra) {
    const headers = Object.assign({'Thumbd-Client-Id': this.client}, extra);
    if (this.token) headers['Authorization'] = 'Bearer ' + this.token;
    return headers;
  },
};

const GAP = 2;                 // px between cells
const PAGE_SIZE = 150;         // listing items per /assets request: whole rows at 1, 3 and 5 columns
const KEPT_PAGES = 40;         // listing pages kept (6,000 items); the farthest go first
const OVERSCAN_ROWS = 1;       // rows kept as elements beyond each edge of the viewport
const MAX_LOADS = 4;           // thumbnail fetches under way at once
const MAX_HEIGHT = 15e6;       // px, the tallest spacer (browsers stop laying out at 17-33 million)
const MIN_ROWS = 3.4;          // rows 3 columns show at least (3 whole, part of a 4th): the grid's widest
const DWELL_MS = 100;          // a row this long in the DOM may load while the view moves slowly...
const SLOW = 0.3;              // ...slower than this, in viewports a second (a fling at iOS's
                               // deceleration glides 0.15 of a viewport more: less than a row)
const IDLE_MS = 100;           // no scroll for this long: the view has stopped, every cell may load
const FIRST_RETRY_MS = 150;    // a 503 listing is asked again after this, then 1.5 times longer up to its Retry-After

const $ = id => document.getElementById(id);
const view = {scroller: $('scroller'), grid: $('grid'), total: $('total'), status: $('status'),
              columns: $('columns'), sort: $('sort')};
const count = n => n.toLocaleString('en-US');

const grid = {
  names: [],          // the server's grid names that are column counts ('1', '3', '5'), from the listing
  columns: 3,
  sort: 'newest',
  total: null,        // listing length, from the last /assets page
  epoch: 0,           // raised by a column or sort change: prefetch answers meant for an earlier one are stopped
  cell: 0, pitch: 0, rows: 0, virtualHeight: 0, height: 0,   // row height and pitch (px), rows, spacer
  width: 0,           // the grid's width (px): the scroller's, or less at 3 and 5 columns on a wide screen
};
const gridName = () => String(grid.columns);

// ---- Layout: rows of square cells (a photo whole at 1 column); the spacer's height (capped)
// maps onto all the rows.

function layout() {
  if (grid.total === null) return;
  const c = grid.columns, width = view.scroller.clientWidth, height = view.scroller.clientHeight;
  if (c === 1) {
    grid.cell = Math.max(1, Math.min(width, height));   // no taller than the view
    grid.width = width;
  } else {
    // The grid's width: the view's, but at most that of 3 columns of which MIN_ROWS rows fit its
    // height, whatever the columns (so 5 columns are smaller cells than 3, as on a phone).
    grid.width = Math.min(width, 3 * ((height + GAP) / MIN_ROWS - GAP) + 2 * GAP);
    grid.cell = Math.max(1, (grid.width - GAP * (c - 1)) / c);
  }
  view.grid.style.width = grid.width + 'px';
  grid.pitch = grid.cell + GAP;
  grid.rows = Math.ceil(grid.total / c);
  grid.virtualHeight = grid.rows * grid.pitch;
  grid.height = Math.min(grid.virtualHeight, MAX_HEIGHT);
  view.grid.style.height = grid.height + 'px';
  view.grid.classList.toggle('one', c === 1);
  for (const row of rows.values()) sizeRow(row);
}

/** The scroll position in the grid of all rows (differs from scrollTop only past MAX_HEIGHT). */
function virtualTop() {
  const top = view.scroller.scrollTop, height = view.scroller.clientHeight;
  if (grid.height >= grid.virtualHeight || grid.height <= height) return top;
  return top * (grid.virtualHeight - height) / (grid.height - height);
}

function scrollToVirtual(y) {
  const height = view.scroller.clientHeight;
  const scale = grid.height >= grid.virtualHeight || grid.height <= height
    ? 1 : (grid.virtualHeight - height) / (grid.height - height);
  view.scroller.scrollTop = y / scale;
}

// ---- The listing, in pages fetched as the scroll needs them.

const pages = new Map();   // page number → items, or the token of its load under way
let listingRetries = 0;    // 503s in a row
const pageOf = index => Math.floor(index / PAGE_SIZE);
const isLoaded = page => Array.isArray(page);

function itemAt(index) {
  if (library.items) return library.items[index];   // the whole listing, walked (gallery-library.js)
  const page = pages.get(pageOf(index));
  return isLoaded(page) ? page[index % PAGE_SIZE] : undefined;
}

async function loadPage(n) {
  if (pages.has(n)) return;
  const token = {sort: grid.sort};   // a sort change clears the map: this load's answer is then dropped
  pages.set(n, token);
  const current = () => pages.get(n) === token;
  try {
    const response = await fetch('/assets?sort=' + token.sort + '&offset=' + n * PAGE_SIZE + '&limit=' + PAGE_SIZE,
                                 {cache: 'no-store', headers: api.headers()});
    if (!current()) return;
    if (response.status === 401) {   // client_keys: the listing needs a client key or the admin token
      pages.delete(n);
      api.listingNeedsKey = true;
      view.status.textContent = api.token ? 'the key was refused (401)' : 'this server needs a key: type it in the panel';
      askForKey();   // loaded again when one is given (the key form's submit)
      return;
    }
    if (response.status === 503) {   // the first scan of the library is under way
      pages.delete(n);
      view.status.textContent = 'indexing the library…';
      // Soon, since a scan often ends within the second Retry-After gives; then backing off to it.
      const seconds = Number(response.headers.get('Retry-After')) || 1;
      setTimeout(schedule, Math.min(FIRST_RETRY_MS * 1.5 ** listingRetries++, Math.min(10, seconds) * 1000));
      return;
    }
    listingRetries = 0;
    if (!response.ok) throw new Error('/assets answered ' + response.status);
    const listing = await response.json();
    if (!current()) return;
    api.listingNeedsKey = false;
    pages.set(n, listing.items);
    learnGrids(listing.items);
    if (listing.total !== grid.total) {
      if (grid.total !== null) {   // the library changed: the other pages are stale now
        for (const [key, page] of [...pages]) if (key !== n && isLoaded(page)) pages.delete(key);
      }
      grid.total = listing.total;
      layout();
    }
    heardGeneration(listing.generation, listing.total);   // gallery-library.js: counts, changes
    dropFarPages(n);
    for (const row of rows.values()) for (const cell of row.cells) fill(cell);
    schedule();
  } catch (error) {
    if (!current()) return;
    pages.delete(n);
    view.status.textContent = 'listing failed (' + error.message + '), trying again';
    setTimeout(schedule, 2000);
  }
}

function dropFarPages(near) {
  const loaded = [...pages.keys()].filter(key => isLoaded(pages.get(key)));
  loaded.sort((a, b) => Math.abs(b - near) - Math.abs(a - near));
  for (const key of loaded.slice(0, Math.max(0, loaded.length - KEPT_PAGES))) pages.delete(key);
}

/** The column buttons, from the grid names the listing's thumbnails carry. */
function learnGrids(items) {
  if (grid.names.length || !items.length) return;
  grid.names = Object.keys(items[0].thumbnails).filter(name => /^[1-9][0-9]?$/.test(name))
    .sort((a, b) => a - b);
  if (!grid.names.includes(gridName()) && grid.names.length) {
    grid.columns = Number(grid.names[Math.floor(grid.names.length / 2)]);
  }
  for (const name of grid.names) {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = name;
    button.title = name + (name === '1' ? ' column' : ' columns');
    button.dataset.columns = name;
    button.onclick = () => setColumns(Number(name));
    view.columns.append(button);
  }
  pressed();
}

function pressed() {
  for (const b of view.columns.children) b.setAttribute('aria-pressed', String(b.dataset.columns === gridName()));
  for (const b of view.sort.children) b.setAttribute('aria-pressed', String(b.dataset.sort === grid.sort));
}

// ---- Rows and cells: only those in and near the viewport exist.

const rows = new Map();    // row number → {number, element, cells, y, since (ms, performance.now)}
let reuse = null;          // while a changed listing is shown: thumbnail URL → a cell that keeps it

function placeRow(number, shift) {
  let row = rows.get(number);
  if (!row) {
    row = {number, element: document.createElement('div'), cells: [], y: null, since: performance.now()};
    row.element.className = 'row';
    for (let i = number * grid.columns; i < Math.min(grid.total, (number + 1) * grid.columns); i++) {
      const item = reuse && itemAt(i), moved = item ? reuse.get(item.thumbnails[gridName()]) : undefined;
      if (moved) {   // the same thumbnail, at another index (gallery-library.js)
        reuse.delete(moved.url);
        moved.index = i;
        moved.element.dataset.index = i;
        // Its placeholder made since it was listed (a changed item that kept its URL): painted now.
        if (moved.element.dataset.placeholder !== 'shown') paintPlaceholder(moved, item);
        row.element.append(moved.element);
        row.cells.push(moved);
        continue;
      }
      const cell = {index: i, element: document.createElement('div'), img: new Image(), url: null,
                    controller: null, objectURL: null, state: 'empty'};
      cell.element.className = 'cell';
      cell.element.dataset.index = i;
      cell.img.decoding = 'async';
      cell.img.alt = '';
      cell.element.append(cell.img);
      row.element.append(cell.element);
      row.cells.push(cell);
      fill(cell);
    }
    sizeRow(row);
    rows.set(number, row);
    view.grid.append(row.element);
  }
  const y = number * grid.pitch + shift;
  if (row.y !== y) {
    row.y = y;
    row.element.style.transform = 'translateY(' + y + 'px)';
  }
}

function sizeRow(row) {
  row.element.style.height = grid.cell + 'px';
  row.element.style.gridTemplateColumns = 'repeat(' + grid.columns + ', minmax(0, 1fr))';
  row.y = null;
  for (const cell of row.cells) fit(cell);
}

/** At 1 column, a cell is its photo's shape (the listing's width/height) fitted in the row: the
 *  whole photo, no taller than the view; a square until its item is known. */
function fit(cell) {
  const style = cell.element.style;
  if (grid.columns !== 1) { style.width = style.height = ''; return; }
  const item = itemAt(cell.index);
  const w = item && item.width > 0 ? item.width : 1, h = item && item.height > 0 ? item.height : 1;
  const scale = Math.min(grid.width / w, grid.cell / h);
  style.width = w * scale + 'px';
  style.height = h * scale + 'px';
}

function dropRow(row) {
  for (const cell of row.cells) cancel(cell);
  row.element.remove();
  rows.delete(row.number);
}

function setState(cell, state) {
  cell.state = state;
  cell.element.dataset.state = state;
}

/** A video's duration (ms) as Photos writes it: 0:07, 12:34, 1:02:03 (seconds rounded down). */
function duration(ms) {
  const total = Math.floor((ms || 0) / 1000), h = Math.floor(total / 3600), m = Math.floor(total / 60) % 60;
  const ss = String(total % 60).padStart(2, '0');
  return h > 0 ? h + ':' + String(m).padStart(2, '0') + ':' + ss : m + ':' + ss;
}

/** Gives a cell its item once the listing page holding it is here, and queues its thumbnail. */
function fill(cell) {
  if (cell.url !== null) return;
  const item = itemAt(cell.index);
  if (!item) return;
  cell.url = item.thumbnails[gridName()];   // the versioned URL, exactly as the listing gives it
  cell.img.alt = item.path;
  cell.element.title = item.path + '\n' + item.width + ' × ' + item.height + ', ' + item.taken.slice(0, 10);
  cell.element.dataset.url = cell.url;
  paintPlaceholder(cell, item);   // at once, for every cell of the page: the thumbnail fades in over it
  if (item.type === 'video') {   // a video cell shows its duration, as Photos does
    const badge = document.createElement('span');
    badge.className = 'duration';
    badge.textContent = duration(item.duration_ms);
    cell.element.append(badge);
  }
  fit(cell);
  setState(cell, 'waiting');
  waiting.add(cell);
}

// ---- Thumbnail loads: a few at a time, nearest the middle of the view first, cancellable.

const waiting = new Set();
const loading = new Set();
const cancelled = {inFlight: 0, unsent: 0};

// The view's motion: scroll positions of the last 150 ms, and when it last moved.
const motion = {samples: [], moved: -Infinity, timer: 0};

function noteScroll() {
  const now = performance.now();
  motion.moved = now;
  motion.samples.push({time: now, top: virtualTop()});
  while (motion.samples.length > 2 && now - motion.samples[0].time > 150) motion.samples.shift();
}

/** Whether the view moves faster than SLOW viewports a second (a jump after a stop counts as fast
 *  until it settles). */
function moving(now) {
  if (now - motion.moved >= IDLE_MS) return false;
  const first = motion.samples[0], last = motion.samples[motion.samples.length - 1];
  if (!first || last.time - first.time < 1) return true;
  return Math.abs(last.top - first.top) / (last.time - first.time) * 1000 > SLOW * view.scroller.clientHeight;
}

/** Whether a waiting cell may ask now: the view stopped, or it moves slowly and the cell's row
 *  has been in the DOM for DWELL_MS. */
function settled(cell, now, fast) {
  if (now - motion.moved >= IDLE_MS) return true;
  const row = rows.get(Math.floor(cell.index / grid.columns));
  return !fast && row !== undefined && now - row.since >= DWELL_MS;
}

function pump() {
  const now = performance.now(), fast = moving(now);
  let held = false;
  while (loading.size < MAX_LOADS && waiting.size) {
    const middle = (virtualTop() + view.scroller.clientHeight / 2) / grid.pitch;
    let next = null, best = Infinity;
    for (const cell of waiting) {
      if (!settled(cell, now, fast)) { held = true; continue; }
      const distance = Math.abs(Math.floor(cell.index / grid.columns) + 0.5 - middle);
      if (distance < best) { best = distance; next = cell; }
    }
    if (!next) break;
    waiting.delete(next);
    load(next);
  }
  if (held && !motion.timer) motion.timer = setTimeout(() => { motion.timer = 0; pump(); }, 40);
  showPage();
}

function load(cell) {
  loading.add(cell);
  setState(cell, 'loading');
  const controller = cell.controller = new AbortController();
  fetch(cell.url, {signal: controller.signal})
    .then(response => {
      if (response.status === 503) throw Object.assign(new Error('busy'), {retry: true});
      if (!response.ok) throw new Error('HTTP ' + response.status);
      return response.blob();
    })
    .then(blob => {
      cell.objectURL = URL.createObjectURL(blob);
      cell.img.src = cell.objectURL;
      return cell.img.decode();
    })
    .then(() => setState(cell, 'loaded'))
    .catch(error => {
      if (controller.signal.aborted) return;
      if (error.retry) {   // the render queue was full: ask again in a second while the cell is shown
        setState(cell, 'waiting');
        setTimeout(() => { if (cell.state === 'waiting' && cell.element.isConnected) { waiting.add(cell); pump(); } }, 1000);
      } else {
        setState(cell, 'failed');
        cell.element.title += '\n' + error.message;
      }
    })
    .finally(() => {
      if (cell.objectURL) { URL.revokeObjectURL(cell.objectURL); cell.objectURL = null; }
      if (cell.controller === controller) cell.controller = null;
      loading.delete(cell);
      pump();
    });
}

/** A cell leaving the DOM: a waiting thumbnail is never asked for; one under way is aborted. */
function cancel(cell) {
  if (waiting.delete(cell)) cancelled.unsent++;
  if (cell.controller) {
    if (cell.state === 'loading') cancelled.inFlight++;
    cell.controller.abort();
    cell.controller = null;
    loading.delete(cell);
  }
  setState(cell, 'cancelled');
}

// ---- Changes of grid or order.

function firstVisibleIndex() {
  return grid.pitch ? Math.min(grid.total - 1, Math.floor(virtualTop() / grid.pitch) * grid.columns) : 0;
}

function reset(anchorIndex) {
  grid.epoch++;
  for (const row of [...rows.values()]) dropRow(row);
  stopAllPrefetch();
  pressed();
  layout();
  scrollToVirtual(Math.floor(Math.max(0, anchorIndex) / grid.columns) * grid.pitch);
  schedule();
}

function setColumns(columns) {
  if (columns === grid.columns) return;
  const anchor = firstVisibleIndex();
  grid.columns = columns;
  reset(anchor);
}

function setSort(sort) {
  if (sort === grid.sort) return;
  grid.sort = sort;
  pages.clear();
  library.items = null;   // walked again in the new order
  reset(0);
}

// ---- Each frame after a scroll or resize.

let frame = 0;
function schedule() {
  if (!frame) frame = requestAnimationFrame(render);
}

function render() {
  frame = 0;
  if (grid.total === null) { loadPage(0); return; }
  const top = virtualTop(), height = view.scroller.clientHeight;
  const first = Math.max(0, Math.floor(top / grid.pitch) - OVERSCAN_ROWS);
  const last = Math.min(grid.rows - 1, Math.floor((top + height) / grid.pitch) + OVERSCAN_ROWS);
  for (const row of [...rows.values()]) if (row.number < first || row.number > last) dropRow(row);
  const shift = view.scroller.scrollTop - top;   // 0 unless the grid scrolls scaled
  for (let r = first; r <= last; r++) placeRow(r, shift);
  // Listing pages for the rows shown and for the preheat rect, so cells fill as they arrive.
  const lastIndex = Math.min(grid.total - 1, Math.ceil((top + height * 1.5) / grid.pitch) * grid.columns);
  const firstIndex = Math.max(0, Math.floor((top - height / 2) / grid.pitch) * grid.columns);
  if (grid.total > 0 && !library.items) for (let p = pageOf(firstIndex); p <= pageOf(lastIndex); p++) loadPage(p);
  updatePreheat(top, height);
  const shown = Math.floor(top / grid.pitch);
  view.status.textContent = grid.total === 0 ? 'the library is empty' : 'rows ' + count(shown + 1) + '–'
    + count(Math.min(grid.rows, Math.ceil((top + height) / grid.pitch))) + ' of ' + count(grid.rows);
  pump();
}

/** The panel's "This page" lines. */
function showPage() {
  const text = (id, value) => { $(id).textContent = value; };
  text('page-preheat', preheat.refused ? 'off: needs the admin token'
    : preheat.rows ? count(preheat.rows.start + 1) + '–' + count(preheat.rows.end) : '–');   // 1-based, as the header's
  text('page-jobs', count(preheat.jobs.length));
  text('page-loading', count(loading.size));
  text('page-waiting', count(waiting.size));
  text('page-aborted', count(cancelled.inFlight));
  text('page-unsent', count(cancelled.unsent));
  text('page-cells', count(view.grid.querySelectorAll('.cell').length));
}

view.scroller.addEventListener('scroll', () => { noteScroll(); schedule(); }, {passive: true});
new ResizeObserver(() => { layout(); schedule(); }).observe(view.scroller);
for (const button of view.sort.children) button.onclick = () => setSort(button.dataset.sort);
schedule();
