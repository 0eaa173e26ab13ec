// The listing followed while the page stays open, by the server's change feed (docs/API.md,
// "Change feed"). A library of up to 20,000 items is walked whole in the background, by cursor
// pages (`next`) of 1,000, once its first page is shown: that gives the header its counts by the
// items' `type` ("300 photos, 5 videos") and a copy of the listing the changes apply to. While
// the page is visible, one request at a time asks `/assets/changes` for what changed since the
// generation shown, waiting up to 25 s for a change (a long-poll); its answer is applied to the
// copy (removed items by their indexes before, inserted and changed ones at theirs now) and the
// grid updated in place, by the items' `url` (their exact names): removed items go, new ones
// come in their places, changed ones (another size or version, so another thumbnail URL) load
// again, cells whose thumbnail stays are moved as they are (a placeholder made since is painted
// on them at once, even during a walk: a cold server's previews), and the item at the top of the
// view stays where it is on screen. An answer that does not fit the copy, or a 410 (the generation is
// too old to diff), walks the listing again. A bigger library is not walked: the header says
// "N items", and a change reloads the listing's pages where the view is. It reads the grid's
// state (gallery-grid.js) when called, so it follows that script.
'use strict';

const WALK_LIMIT = 20000;      // items: a bigger library is not walked
const WALK_PAGE = 1000;        // items per /assets request of a walk
const FEED_WAIT_S = 25;        // how long one change-feed request waits for a change (below proxies' 60 s)
const FEED_RETRY_MS = 2000;    // before asking again after a failure (the server away)

const library = {
  items: null,        // the whole listing in the grid's sort, once walked (else the grid's pages)
  sort: null,         // the sort of `items`
  generation: null,   // the listing's generation the page shows
  counts: null,       // {photos, videos}, from the last walk
  walking: false,     // a walk under way
  followAfterWalk: false,   // a change heard during the walk: the feed is followed again at its end
  feed: null,         // the AbortController of the change-feed request under way
  timer: 0,           // the next change-feed request, after a failure
};

/** The header's count: by type once walked, else the listing's total. */
function showTotal() {
  if (grid.total === null) return;
  const plural = (n, one, many) => count(n) + (n === 1 ? one : many);
  view.total.textContent = library.counts
    ? plural(library.counts.photos, ' photo', ' photos') + (library.counts.videos ? ', ' + plural(library.counts.videos, ' video', ' videos') : '')
    : plural(grid.total, ' item', ' items');
}

/** A listing page's `generation` and `total` (gallery-grid.js, loadPage): the first one starts
 *  the walk; another generation than the one shown means the library changed. */
function heardGeneration(generation, total) {
  if (library.generation === null) library.generation = generation;
  showTotal();
  if (generation !== library.generation || library.items === null) refresh(generation);
  follow();
}

/** The whole listing in the grid's sort, by cursor pages: {items, generation, sort}, or null
 *  (refused, failed, or the sort changed meanwhile). Its generation is its first page's: a change
 *  during the walk is seen again by the next look. */
async function walkListing() {
  const sort = grid.sort, items = [];
  let after = null, generation = null;
  do {
    const response = await fetch('/assets?sort=' + sort + '&limit=' + WALK_PAGE + (after ? '&after=' + after : ''),
                                 {cache: 'no-store', headers: api.headers()});
    if (!response.ok || grid.sort !== sort) return null;
    const page = await response.json();
    if (grid.sort !== sort) return null;
    if (generation === null) generation = page.generation;
    for (const item of page.items) items.push(item);
    after = page.next;
  } while (after && items.length <= WALK_LIMIT);
  return {items, generation, sort};
}

/** Brings the grid to the listing as it is now; `generation`: the one just heard, if known. */
async function refresh(generation) {
  if (library.walking || grid.total === null) return;
  if (grid.total > WALK_LIMIT) {   // not walked: the pages where the view is are loaded again
    if (generation !== undefined && generation !== library.generation) {
      library.generation = generation;
      for (const [key, page] of [...pages]) if (isLoaded(page)) pages.delete(key);
      for (const row of [...rows.values()]) dropRow(row);
      schedule();
    }
    return;
  }
  library.walking = true;
  try {
    const walked = await walkListing();
    if (walked && walked.sort === grid.sort && walked.items.length <= WALK_LIMIT) apply(walked);
  } catch (error) {
    // the server is away: the next look tries again
  } finally {
    library.walking = false;
    if (library.followAfterWalk) {
      library.followAfterWalk = false;
      follow();
    }
  }
}

/** Shows a walked listing: the item at the top of the view (or the first one after it still
 *  listed) keeps its place on screen, cells whose thumbnail URL stays keep their element. */
function apply(walked) {
  const c = grid.columns, top = virtualTop();
  const row = grid.pitch ? Math.floor(top / grid.pitch) : 0, into = top - row * grid.pitch;
  const where = new Map(walked.items.map((item, i) => [item.url, i]));
  let anchor = null;
  for (let i = row * c; i < (grid.total || 0) && anchor === null; i++) {
    const item = itemAt(i);
    if (!item) break;
    if (where.has(item.url)) anchor = where.get(item.url);
  }
  // Cells that keep their thumbnail are moved, the others are let go.
  const kept = new Map();
  for (const shown of [...rows.values()]) {
    for (const cell of shown.cells) {
      if (cell.url !== null && !kept.has(cell.url)) kept.set(cell.url, cell); else cancel(cell);
    }
    shown.element.remove();
    rows.delete(shown.number);
  }
  library.items = walked.items;
  library.sort = walked.sort;
  library.generation = walked.generation;
  library.counts = {photos: 0, videos: 0};
  for (const item of walked.items) library.counts[item.type === 'video' ? 'videos' : 'photos']++;
  pages.clear();
  grid.total = walked.items.length;
  showTotal();
  layout();
  if (anchor !== null) scrollToVirtual(Math.floor(anchor / c) * grid.pitch + into);
  reuse = kept;
  render();   // now, so no frame shows the grid empty
  reuse = null;
  for (const cell of kept.values()) if (!cell.element.isConnected) cancel(cell);
}

/** Follows the change feed: one request at a time, from the generation shown, while the page
 *  is seen; each answer applied, then the next asked at once (after a failure, a little later). */
async function follow() {
  if (library.feed || library.timer || document.hidden || library.generation === null || api.listingNeedsKey) return;
  const controller = new AbortController(), since = library.generation, sort = grid.sort;
  library.feed = controller;
  let delay = 0;
  try {
    const response = await fetch('/assets/changes?sort=' + sort + '&since=' + since + '&wait=' + FEED_WAIT_S,
                                 {cache: 'no-store', headers: api.headers(), signal: controller.signal});
    if (response.status === 410) {   // too old to diff: the listing is walked again
      const head = await fetch('/assets?sort=' + grid.sort + '&limit=0', {cache: 'no-store', headers: api.headers()});
      if (head.ok) await refresh((await head.json()).generation);
      if (library.generation === since) delay = FEED_RETRY_MS;
    } else if (response.status === 401) {
      delay = null;   // followed again once a key is given (its first page hears the generation)
    } else if (!response.ok) {
      delay = (Number(response.headers.get('Retry-After')) || FEED_RETRY_MS / 1000) * 1000;
    } else {
      const changes = await response.json();
      if (changes.generation !== since && since === library.generation) await applyChanges(changes, sort);
      if (changes.generation !== since && library.generation === since) {
        // Not applied: a walk under way is followed again at its end; else (it failed) soon.
        if (library.walking) {
          library.followAfterWalk = true;
          delay = null;
        } else {
          delay = 250;
        }
      }
    }
  } catch (error) {
    delay = controller.signal.aborted ? null : FEED_RETRY_MS;   // aborted: hidden, followed again when shown
  } finally {
    if (library.feed === controller) library.feed = null;
  }
  if (delay === 0) follow();
  else if (delay !== null) library.timer = setTimeout(() => { library.timer = 0; follow(); }, delay);
}

/** Paints at once, on the cells shown, the placeholders of changed items that kept their
 *  thumbnail URL (a placeholder made after the listing: a cold server's previews), and takes
 *  away those the listing no longer has, even while the listing is still being walked. */
function paintArrivedPlaceholders(changed) {
  const arrived = new Map();
  for (const {item} of changed) arrived.set(item.thumbnails[gridName()], item);
  if (arrived.size === 0) return;
  for (const row of rows.values()) {
    for (const cell of row.cells) {
      const item = cell.url !== null && arrived.get(cell.url);
      if (!item) continue;
      const shown = cell.element.dataset.placeholder === 'shown';
      // A placeholder made, or one taken away (a photo that cannot be rendered, or may not be
      // read now: docs/API.md, "Change feed").
      if (item.thumbhash ? !shown : shown) paintPlaceholder(cell, item);
    }
  }
}

/** Applies a change-feed answer (docs/API.md, "Change feed") to the walked listing and shows it;
 *  the listing is walked again when it was not walked in this sort, or the answer does not fit. */
async function applyChanges(changes, sort) {
  paintArrivedPlaceholders(changes.changed);
  if (library.items === null || library.sort !== sort || grid.sort !== sort) return refresh(changes.generation);
  const items = library.items.slice();
  for (const removed of changes.removed.slice().reverse()) {   // descending: each index as before
    if (!items[removed.index] || items[removed.index].url !== removed.url) return refresh(changes.generation);
    items.splice(removed.index, 1);
  }
  for (const {index, item} of changes.inserted) {   // ascending: each index as now
    if (index > items.length) return refresh(changes.generation);
    items.splice(index, 0, item);
  }
  for (const {index, item} of changes.changed) {
    if (!items[index] || items[index].url !== item.url) return refresh(changes.generation);
    items[index] = item;
  }
  if (items.length !== changes.total || items.length > WALK_LIMIT) return refresh(changes.generation);
  apply({items, generation: changes.generation, sort});
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden) return follow();
  if (library.feed) library.feed.abort();
  clearTimeout(library.timer);
  library.timer = 0;
});
