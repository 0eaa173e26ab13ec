// The viewer: a tap or click on a cell shows its photo over the grid, whole, at the 1-column
// grid's size (the item's `thumbnails['1']`, the largest a phone's grid asks for), with something
// at once under it, as Photos opens a photo: at 1 column the cell's own thumbnail, else the
// placeholder, else the cell's square thumbnail at the photo's centre. Each photo shown is a history entry (`history.pushState`), so a phone's back button
// closes the viewer; Escape, the × button or a tap on the photo go back too. The arrow keys,
// the ‹ › buttons and a horizontal swipe show the neighbours (replacing the entry). It reads the
// grid's state (gallery-grid.js) when called, so it follows that script.
'use strict';

const viewer = {
  element: $('viewer'), image: $('viewer-image'), standIn: $('viewer-stand-in'), caption: $('viewer-caption'),
  index: null,   // the listing index shown, or null when closed
  swipe: null,   // the pointer down on the viewer: {x, y, id}
};

/** Shows item `index` in the viewer; `how`: 'push' (a new history entry) or 'replace'. */
function showPhoto(index, how) {
  const item = itemAt(index);
  if (!item) return;
  viewer.index = index;
  const state = {viewer: item.url, index, sort: grid.sort};
  if (how === 'push') history.pushState(state, '');
  else if (how === 'replace') history.replaceState(state, '');
  // The stand-in: at 1 column the cell's thumbnail (already decoded), else the placeholder, else
  // the cell's square thumbnail where it lies in the photo (its centre).
  const canvas = viewer.standIn, cell = [...rows.values()].flatMap(row => row.cells).find(c => c.index === index);
  const pixels = item.thumbhash ? placeholderPixels(item.thumbhash) : null;
  const decoded = cell && cell.state === 'loaded' && cell.img.naturalWidth ? cell.img : null;
  const context = canvas.getContext('2d');
  if (decoded && (grid.columns === 1 || !pixels)) {
    const w = decoded.naturalWidth, h = decoded.naturalHeight;
    const scale = grid.columns === 1 ? 1 : Math.max(w / item.width, h / item.height);   // a cover square: the photo's scale
    canvas.width = Math.max(1, Math.round(item.width * scale) || w);
    canvas.height = Math.max(1, Math.round(item.height * scale) || h);
    context.drawImage(decoded, (canvas.width - w) / 2, (canvas.height - h) / 2);
  } else if (pixels) {
    canvas.width = pixels.width;
    canvas.height = pixels.height;
    context.putImageData(pixels, 0, 0);
  } else {
    canvas.width = canvas.height = 1;
    context.clearRect(0, 0, 1, 1);
  }
  viewer.element.dataset.state = 'loading';
  viewer.image.removeAttribute('src');
  viewer.image.alt = item.path;
  viewer.image.onload = () => { if (viewer.index === index) viewer.element.dataset.state = 'loaded'; };
  viewer.image.onerror = () => { if (viewer.index === index) viewer.element.dataset.state = 'failed'; };
  viewer.image.src = item.thumbnails['1'] || item.thumbnails[gridName()];   // a versioned URL, as listed
  viewer.caption.textContent = item.path + ' · ' + item.width + ' × ' + item.height + ' · ' + item.taken.slice(0, 10);
  $('viewer-previous').disabled = index <= 0;
  $('viewer-next').disabled = index >= grid.total - 1;
  viewer.element.hidden = false;
  viewer.element.focus();
  // The neighbours' listing pages, so the arrows have them.
  for (const next of [index - 1, index + 1]) if (next >= 0 && next < grid.total && !itemAt(next) && !library.items) loadPage(pageOf(next));
}

function hidePhoto() {
  if (viewer.index === null) return;
  const index = viewer.index;
  viewer.index = null;
  viewer.element.hidden = true;
  viewer.image.removeAttribute('src');   // a large image still under way is not needed now
  // The grid shows where the viewer was, if it went past the view.
  const row = Math.floor(index / grid.columns) * grid.pitch, top = virtualTop();
  if (row < top || row + grid.pitch > top + view.scroller.clientHeight) scrollToVirtual(row);
  view.scroller.focus({preventScroll: true});
}

/** Closes the viewer by going back to the grid's history entry (the phone's back button does the same). */
function closeViewer() {
  if (history.state && history.state.viewer !== undefined) history.back(); else hidePhoto();
}

function neighbour(step) {
  if (viewer.index === null) return;
  const next = viewer.index + step;
  if (next >= 0 && next < grid.total && itemAt(next)) showPhoto(next, 'replace');
}

view.grid.addEventListener('click', event => {
  const element = event.target.closest('.cell');
  if (!element || !element.dataset.url) return;
  showPhoto(Number(element.dataset.index), 'push');
});
window.addEventListener('popstate', event => {
  const state = event.state;
  if (state && state.viewer !== undefined && state.sort === grid.sort && itemAt(state.index)
      && itemAt(state.index).url === state.viewer) showPhoto(state.index, null);
  else hidePhoto();
});
document.addEventListener('keydown', event => {
  if (viewer.index === null) return;
  if (event.key === 'Escape') closeViewer();
  else if (event.key === 'ArrowLeft') neighbour(-1);
  else if (event.key === 'ArrowRight') neighbour(1);
  else return;
  event.preventDefault();
});
$('viewer-close').addEventListener('click', event => { event.stopPropagation(); closeViewer(); });
$('viewer-previous').addEventListener('click', event => { event.stopPropagation(); neighbour(-1); });
$('viewer-next').addEventListener('click', event => { event.stopPropagation(); neighbour(1); });
// A tap closes; a horizontal swipe of 50 px or more shows the neighbour it pulls in.
viewer.element.addEventListener('pointerdown', event => {
  if (event.target.closest('button')) return;
  viewer.swipe = {x: event.clientX, y: event.clientY, id: event.pointerId};
});
viewer.element.addEventListener('pointerup', event => {
  const swipe = viewer.swipe;
  viewer.swipe = null;
  if (!swipe || swipe.id !== event.pointerId) return;
  const dx = event.clientX - swipe.x, dy = event.clientY - swipe.y;
  if (Math.abs(dx) >= 50 && Math.abs(dx) > Math.abs(dy)) neighbour(dx < 0 ? 1 : -1);
  else if (Math.abs(dx) < 10 && Math.abs(dy) < 10) closeViewer();
});
viewer.element.addEventListener('pointercancel', () => { viewer.swipe = null; });
