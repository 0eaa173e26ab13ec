/// `GET /`: the reference client of a phone's photo grid, in one page with no external
/// resources. A virtual grid of the whole library (only the rows in and near the viewport are
/// elements; a spacer gives the scroll height), paged through `/assets`, showing the versioned
/// thumbnail URLs the listing gives; the preheat pattern of Apple's `PHCachingImageManager`
/// sample through range `POST /prefetch`; thumbnails that scroll away before loading cancelled;
/// and a live panel of `/stats`. The parts: `GalleryStyle`, `GalleryPlaceholderScript` (each
/// item's thumbhash painted under its thumbnail), `GalleryGridScript` (grid, loading),
/// `GalleryPreheatScript` (range prefetch ahead of the view), `GalleryStatsScript` (the panel
/// and its chart).
enum GalleryPage {
    /// The whole page, UTF-8, assembled once.
    static let html: [UInt8] = Array(("""
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
    <title>thumbd gallery</title><link rel="icon" href="data:,">
    <style>
    """ + style + """
    </style></head><body>
    <header>
      <h1>thumbd</h1>
      <span id="total" aria-live="polite">Loading the library…</span>
      <span class="controls">
        <span class="segmented" id="columns" role="group" aria-label="Columns"></span>
        <span class="segmented" id="sort" role="group" aria-label="Sort">
          <button type="button" data-sort="newest" aria-pressed="true">Newest</button><button type="button" data-sort="oldest" aria-pressed="false">Oldest</button>
        </span>
      </span>
      <span id="status"></span>
    </header>
    <main id="scroller" tabindex="0" aria-label="Photos"><div id="grid"></div></main>
    <aside id="panel" aria-label="Server statistics">
      <h2>Server <span id="stats-state">connecting…</span></h2>
      <div id="stats-refused" hidden>
        <p>This server asks for its admin token (401): <code>/stats</code> and prefetch need it.
        Thumbnails load without it.</p>
        <form id="token-form"><input id="token" type="password" autocomplete="off" placeholder="admin_token" aria-label="Admin token"><button type="submit">Use</button></form>
      </div>
      <div id="stats-body">
        <h3>Cache hits</h3>
        <dl>
          <dt>memory</dt><dd data-stat="memory_cache.hits">–</dd>
          <dt>disk</dt><dd data-stat="disk_cache.hits">–</dd>
          <dt>hit ratio</dt><dd data-stat="hit_ratio" data-unit="ratio" title="(memory hits + disk hits) / thumbnail lookups, since start">–</dd>
        </dl>
        <h3>Renders</h3>
        <dl>
          <dt>total</dt><dd data-stat="renders.total">–</dd>
          <dt>for prefetch</dt><dd data-stat="renders.prefetch">–</dd>
          <dt>running, queued</dt><dd><span data-stat="renders.in_flight">–</span>, <span data-stat="renders.queued">–</span></dd>
          <dt>latency p50</dt><dd data-stat="renders.latency_ms.p50" data-unit="ms">–</dd>
          <dt>latency p95</dt><dd data-stat="renders.latency_ms.p95" data-unit="ms">–</dd>
        </dl>
        <h3>Prefetch</h3>
        <dl class="pairs">
          <dt>jobs</dt><dd data-stat="prefetch.jobs">–</dd>
          <dt>queued</dt><dd data-stat="prefetch.queued">–</dd>
          <dt>done</dt><dd data-stat="prefetch.done">–</dd>
          <dt>skipped</dt><dd data-stat="prefetch.skipped" title="already cached">–</dd>
          <dt>cancelled</dt><dd data-stat="prefetch.cancelled">–</dd>
          <dt>failed</dt><dd data-stat="prefetch.failed">–</dd>
          <dt>not stored</dt><dd data-stat="prefetch.not_stored" title="rendered, but kept by no cache tier">–</dd>
        </dl>
        <h3>Last <span id="chart-minutes">3</span> minutes</h3>
        <figure id="chart">
          <svg viewBox="0 0 180 60" preserveAspectRatio="none" role="img" aria-label="Hit ratio and renders per second">
            <line x1="0" y1="30" x2="180" y2="30" class="rule"/>
            <path id="chart-renders" class="renders"/><path id="chart-ratio" class="ratio"/>
          </svg>
          <figcaption><span class="key ratio">hit ratio</span> 0–100% · <span class="key renders">renders/s</span> 0–<span id="chart-renders-max">1</span></figcaption>
        </figure>
        <h3>Storage</h3>
        <dl>
          <dt>memory</dt><dd><span data-stat="memory_cache.entries">–</span> · <span data-stat="memory_cache.bytes" data-unit="bytes">–</span></dd>
          <dt>disk</dt><dd><span data-stat="disk_cache.entries">–</span> · <span data-stat="disk_cache.bytes" data-unit="bytes">–</span></dd>
          <dt>assets</dt><dd data-stat="library.assets">–</dd>
          <dt>uptime</dt><dd data-stat="uptime_seconds" data-unit="seconds">–</dd>
        </dl>
      </div>
      <h2>This page</h2>
      <dl>
        <dt>preheat rows</dt><dd id="page-preheat">–</dd>
        <dt>prefetch jobs</dt><dd id="page-jobs" title="this page's jobs whose rows are still in the preheat rect">–</dd>
      </dl>
      <h3>Thumbnails</h3>
      <dl class="pairs">
        <dt>loading</dt><dd id="page-loading">–</dd>
        <dt>waiting</dt><dd id="page-waiting">–</dd>
        <dt>aborted</dt><dd id="page-aborted" title="scrolled away while under way: the request was aborted">–</dd>
        <dt>unsent</dt><dd id="page-unsent" title="scrolled away while waiting: never requested">–</dd>
        <dt>cells</dt><dd id="page-cells" title="cell elements in the page">–</dd>
      </dl>
    </aside>
    <script>
    'use strict';
    """ + placeholderScript + gridScript + preheatScript + statsScript + """
    </script></body></html>

    """).utf8)
}
