// The gallery's placeholders: each listing item's `thumbhash` (docs/API.md, "Listing") decoded
// by the reference's `thumbHashToRGBA` (Evan Wallace, github.com/evanw/thumbhash, MIT; the same
// steps as `ThumbHash.decode`) into a canvas under the cell's thumbnail the moment its listing
// page arrives (the browser smooths it as it scales it up); the thumbnail fades in over it, and
// it is hidden once the fade is over (a thumbnail with alpha shows no placeholder through). One
// decode per hash: the pixels are kept by hash, at most 2,000.
'use strict';

const placeholders = new Map();   // thumbhash (base64) → ImageData, or null when it does not decode
const MAX_PLACEHOLDERS = 2000;

/** A thumbhash's blurred image as ImageData (32 px on its longer side), or null. */
function placeholderPixels(base64) {
  let pixels = placeholders.get(base64);
  if (pixels !== undefined) return pixels;
  try {
    const {w, h, rgba} = thumbHashToRGBA(Uint8Array.from(atob(base64), c => c.charCodeAt(0)));
    pixels = new ImageData(rgba, w, h);
  } catch (error) {
    pixels = null;
  }
  if (placeholders.size >= MAX_PLACEHOLDERS) placeholders.delete(placeholders.keys().next().value);
  placeholders.set(base64, pixels);
  return pixels;
}

/** The reference decoder: a hash → {w, h, rgba} at 32 px on the longer side. */
function thumbHashToRGBA(hash) {
  const {PI, min, max, cos, round} = Math;
  if (hash.length < 5) throw new Error('short thumbhash');
  const header24 = hash[0] | (hash[1] << 8) | (hash[2] << 16);
  const header16 = hash[3] | (hash[4] << 8);
  const l_dc = (header24 & 63) / 63;
  const p_dc = ((header24 >> 6) & 63) / 31.5 - 1;
  const q_dc = ((header24 >> 12) & 63) / 31.5 - 1;
  const l_scale = ((header24 >> 18) & 31) / 31;
  const hasAlpha = header24 >> 23;
  const p_scale = ((header16 >> 3) & 63) / 63;
  const q_scale = ((header16 >> 9) & 63) / 63;
  const isLandscape = header16 >> 15;
  const lx = max(3, isLandscape ? hasAlpha ? 5 : 7 : header16 & 7);
  const ly = max(3, isLandscape ? header16 & 7 : hasAlpha ? 5 : 7);
  const a_dc = hasAlpha ? (hash[5] & 15) / 15 : 1;
  const a_scale = (hash[5] >> 4) / 15;
  const ac_start = hasAlpha ? 6 : 5;
  let ac_index = 0;
  const decodeChannel = (nx, ny, scale) => {
    const ac = [];
    for (let cy = 0; cy < ny; cy++)
      for (let cx = cy ? 0 : 1; cx * ny < nx * (ny - cy); cx++)
        ac.push((((hash[ac_start + (ac_index >> 1)] >> ((ac_index++ & 1) << 2)) & 15) / 7.5 - 1) * scale);
    return ac;
  };
  const l_ac = decodeChannel(lx, ly, l_scale);
  const p_ac = decodeChannel(3, 3, p_scale * 1.25);
  const q_ac = decodeChannel(3, 3, q_scale * 1.25);
  const a_ac = hasAlpha && decodeChannel(5, 5, a_scale);
  const ratio = (isLandscape ? hasAlpha ? 5 : 7 : header16 & 7) / (isLandscape ? header16 & 7 : hasAlpha ? 5 : 7);
  const w = round(ratio > 1 ? 32 : 32 * ratio), h = round(ratio > 1 ? 32 / ratio : 32);
  if (!(w > 0 && h > 0)) throw new Error('bad thumbhash');
  const rgba = new Uint8ClampedArray(w * h * 4), fx = [], fy = [];
  for (let y = 0, i = 0; y < h; y++) {
    for (let x = 0; x < w; x++, i += 4) {
      let l = l_dc, p = p_dc, q = q_dc, a = a_dc;
      for (let cx = 0, n = max(lx, hasAlpha ? 5 : 3); cx < n; cx++) fx[cx] = cos(PI / w * (x + 0.5) * cx);
      for (let cy = 0, n = max(ly, hasAlpha ? 5 : 3); cy < n; cy++) fy[cy] = cos(PI / h * (y + 0.5) * cy);
      for (let cy = 0, j = 0; cy < ly; cy++)
        for (let cx = cy ? 0 : 1, fy2 = fy[cy] * 2; cx * ly < lx * (ly - cy); cx++, j++) l += l_ac[j] * fx[cx] * fy2;
      for (let cy = 0, j = 0; cy < 3; cy++)
        for (let cx = cy ? 0 : 1, fy2 = fy[cy] * 2; cx < 3 - cy; cx++, j++) {
          const f = fx[cx] * fy2;
          p += p_ac[j] * f;
          q += q_ac[j] * f;
        }
      if (hasAlpha)
        for (let cy = 0, j = 0; cy < 5; cy++)
          for (let cx = cy ? 0 : 1, fy2 = fy[cy] * 2; cx < 5 - cy; cx++, j++) a += a_ac[j] * fx[cx] * fy2;
      const b = l - 2 / 3 * p, r = (3 * l - b + q) / 2, g = r - q;
      rgba[i] = max(0, 255 * min(1, r));
      rgba[i + 1] = max(0, 255 * min(1, g));
      rgba[i + 2] = max(0, 255 * min(1, b));
      rgba[i + 3] = max(0, 255 * min(1, a));
    }
  }
  return {w, h, rgba};
}

/** Paints a cell's placeholder under its thumbnail (none while the item has no thumbhash). */
function paintPlaceholder(cell, item) {
  const pixels = item.thumbhash ? placeholderPixels(item.thumbhash) : null;
  const painted = cell.element.querySelector(':scope > canvas');
  if (painted) painted.remove();   // one placeholder a cell; none once the listing takes it away
  cell.element.dataset.placeholder = pixels ? 'shown' : 'none';
  if (!pixels) return;
  const canvas = document.createElement('canvas');
  canvas.width = pixels.width;
  canvas.height = pixels.height;
  canvas.getContext('2d').putImageData(pixels, 0, 0);
  cell.element.prepend(canvas);
}
