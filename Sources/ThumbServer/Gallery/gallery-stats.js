// The stats panel's JavaScript: `/stats` read every second into the panel (each value sits in
// the element whose `data-stat` names its field), the hit ratio worked out as (memory hits +
// disk hits) / lookups (README, "/stats": lookups are memory hits + misses), and a chart of the
// last 3 minutes drawn as inline SVG: per second, the hit ratio of that second's lookups (a gap
// when there were none) and the renders run. A 401 (the server has an `admin_token`) shows a
// note and a field for the token instead of the numbers. The header's Stats button shows or
// hides the panel, remembered in localStorage (by default hidden on a narrow screen, where it
// would take the grid's room); while it is hidden, or the page is, `/stats` is read every 10 s.
'use strict';

const CHART_SAMPLES = 180;    // one a second: 3 minutes
const stats = {history: [], last: null, timer: 0};

function statValue(snapshot, key) {
  if (key === 'hit_ratio') {
    const lookups = snapshot.memory_cache.hits + snapshot.memory_cache.misses;
    return lookups ? (snapshot.memory_cache.hits + snapshot.disk_cache.hits) / lookups : null;
  }
  return key.split('.').reduce((value, part) => value == null ? undefined : value[part], snapshot);
}

function formatStat(value, unit) {
  if (value === null || value === undefined) return '–';
  switch (unit) {
    case 'ratio': return (value * 100).toFixed(1) + ' %';
    case 'ms': return value.toFixed(1) + ' ms';
    case 'bytes':
      return value < 1024 * 1024 ? (value / 1024).toFixed(1) + ' KiB' : (value / 1024 / 1024).toFixed(1) + ' MiB';
    case 'seconds': {
      const s = Math.floor(value);
      if (s < 60) return s + ' s';
      return s < 3600 ? Math.floor(s / 60) + ' min ' + (s % 60) + ' s'
        : Math.floor(s / 3600) + ' h ' + Math.floor(s % 3600 / 60) + ' min';
    }
    default: return count(value);
  }
}

function showStats(snapshot) {
  $('stats-refused').hidden = !api.listingNeedsKey;
  $('stats-body').hidden = false;
  $('stats-state').textContent = 'live';
  for (const element of document.querySelectorAll('#stats-body [data-stat]')) {
    element.textContent = formatStat(statValue(snapshot, element.dataset.stat), element.dataset.unit);
  }
  sample(snapshot);
  drawChart();
}

function sample(snapshot) {
  const hits = snapshot.memory_cache.hits + snapshot.disk_cache.hits;
  const lookups = snapshot.memory_cache.hits + snapshot.memory_cache.misses;
  const now = {uptime: snapshot.uptime_seconds, hits, lookups, renders: snapshot.renders.total};
  const last = stats.last;
  stats.last = now;
  if (!last) return;
  if (now.uptime < last.uptime) { stats.history = []; return; }   // the server restarted
  const seconds = now.uptime - last.uptime;
  if (seconds <= 0) return;
  stats.history.push({ratio: now.lookups > last.lookups ? (now.hits - last.hits) / (now.lookups - last.lookups) : null,
                      renders: (now.renders - last.renders) / seconds});
  if (stats.history.length > CHART_SAMPLES) stats.history.shift();
}

function drawChart() {
  const width = 180, height = 60, n = stats.history.length;
  const x = i => width - (n - 1 - i) * width / (CHART_SAMPLES - 1);
  const y = fraction => (height - 2 - fraction * (height - 4)).toFixed(1);
  let top = 1;
  for (const s of stats.history) top = Math.max(top, s.renders);
  top = niceCeiling(top);
  let ratio = '', renders = '', pen = 'M';
  stats.history.forEach((s, i) => {
    renders += (i ? 'L' : 'M') + x(i).toFixed(1) + ' ' + y(s.renders / top);
    if (s.ratio === null) { pen = 'M'; return; }
    ratio += pen + x(i).toFixed(1) + ' ' + y(s.ratio);
    pen = 'L';
  });
  $('chart-ratio').setAttribute('d', ratio);
  $('chart-renders').setAttribute('d', renders);
  $('chart-renders-max').textContent = count(top);
}

/** 1, 2, 5, 10, 20, 50…: the renders axis' top. */
function niceCeiling(value) {
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}

function showRefused() {
  $('stats-state').textContent = api.token ? 'the token was refused (401)' : 'needs the admin token (401)';
  askForKey();
  $('stats-body').hidden = true;
}

/** Shows the key field: `/stats` or, with client_keys, the listing answered 401 (the panel is
 *  shown for it, not remembered). */
function askForKey() {
  $('stats-refused').hidden = false;
  if (api.listingNeedsKey) showPanel(true, false);
}

// ---- The panel shown or hidden (the header's Stats button).

const PANEL_KEY = 'thumbd.gallery.panel';   // localStorage: 'open' or 'closed'
const panelShown = () => !document.body.classList.contains('panel-closed');

function showPanel(open, remember) {
  document.body.classList.toggle('panel-closed', !open);
  $('panel-toggle').setAttribute('aria-expanded', String(open));
  if (remember) {
    try { localStorage.setItem(PANEL_KEY, open ? 'open' : 'closed'); } catch (error) { /* storage off */ }
  }
  if (open) pollStats();
}

function rememberedPanel() {
  try {
    const remembered = localStorage.getItem(PANEL_KEY);
    if (remembered === 'open' || remembered === 'closed') return remembered === 'open';
  } catch (error) {
    // storage off: the default
  }
  return !matchMedia('(max-width: 760px)').matches;
}

async function pollStats() {
  clearTimeout(stats.timer);
  const started = performance.now();
  let period = panelShown() && !document.hidden ? 1000 : 10000;
  try {
    const response = await fetch('/stats', {cache: 'no-store', headers: api.headers(), signal: AbortSignal.timeout(5000)});
    if (response.status === 401) {
      showRefused();
      period = 5000;
    } else if (!response.ok) {
      throw new Error('/stats answered ' + response.status);
    } else {
      showStats(await response.json());
    }
  } catch (error) {
    $('stats-state').textContent = 'not answering (' + error.message + ')';
  }
  clearTimeout(stats.timer);
  stats.timer = setTimeout(pollStats, Math.max(0, started + period - performance.now()));
}

$('token-form').addEventListener('submit', event => {
  event.preventDefault();
  api.token = $('token').value.trim();
  retryPreheat();
  pollStats();
  schedule();   // the listing's pages a 401 left unloaded
});
$('panel-toggle').addEventListener('click', () => showPanel(!panelShown(), true));
document.addEventListener('visibilitychange', () => { if (!document.hidden && panelShown()) pollStats(); });
showPanel(rememberedPanel(), false);
if (!panelShown()) pollStats();
