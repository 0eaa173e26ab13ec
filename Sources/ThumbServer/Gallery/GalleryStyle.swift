extension GalleryPage {
    /// The gallery's CSS: a header, the scrolling grid and the stats panel beside it (below it on
    /// a narrow screen); dark, as photo apps are, so thumbnails stand out.
    static let style = #"""
    *{box-sizing:border-box}
    html,body{height:100%;margin:0}
    body{font:13px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;background:#111;color:#ddd;display:grid;
      grid-template:"head head" auto "grid panel" 1fr / minmax(0,1fr) 280px}
    header{grid-area:head;display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;padding:8px 12px;
      background:#181818;border-bottom:1px solid #2a2a2a}
    h1{font-size:16px;margin:0;color:#fff}
    .controls{display:flex;gap:10px}
    .segmented{display:inline-flex;border:1px solid #3a3a3a;border-radius:6px;overflow:hidden}
    .segmented button{font:inherit;background:#222;color:#ccc;border:0;padding:3px 11px;cursor:pointer}
    .segmented button+button{border-left:1px solid #3a3a3a}
    .segmented button[aria-pressed=true]{background:#3d6fd6;color:#fff}
    #status{color:#999;margin-left:auto;font-variant-numeric:tabular-nums}
    #scroller{grid-area:grid;overflow-y:auto;overflow-anchor:none;position:relative;outline:none}
    #grid{position:relative;width:100%}
    .row{position:absolute;left:0;right:0;top:0;display:grid;gap:2px;contain:strict}
    .cell{position:relative;background:#222;overflow:hidden}
    .cell img{position:relative;width:100%;height:100%;display:block;object-fit:cover;opacity:0;transition:opacity .3s}
    .cell canvas{position:absolute;inset:0;width:100%;height:100%;object-fit:cover}
    .cell[data-state=loaded] canvas{visibility:hidden;transition:visibility 0s .3s}
    .one .cell{background:#000}
    .one .cell canvas{object-fit:contain}
    .one .cell img{object-fit:contain}
    .cell[data-state=loaded] img{opacity:1}
    .cell .duration{position:absolute;right:4px;bottom:3px;color:#fff;font:600 12px/1 system-ui,sans-serif;text-shadow:0 0 3px #000}
    .cell[data-state=failed]::after{content:"!";position:absolute;inset:0;display:grid;place-items:center;color:#c55;font-size:20px}
    #panel{grid-area:panel;overflow-y:auto;padding:6px 14px 14px;background:#161616;border-left:1px solid #2a2a2a;
      font-variant-numeric:tabular-nums}
    #panel h2{font-size:14px;margin:10px 0 2px;color:#fff}
    #panel h3{font-size:11px;margin:8px 0 2px;color:#888;text-transform:uppercase;letter-spacing:.05em;font-weight:600}
    #stats-state{font-weight:normal;color:#888;font-size:12px}
    #panel dl{display:grid;grid-template-columns:auto 1fr;gap:1px 10px;margin:0}
    #panel dt{color:#999}
    #panel dd{margin:0;text-align:right;color:#eee}
    #panel dl.pairs{grid-template-columns:auto 1fr auto 1fr}
    #panel dl.pairs dd{margin-right:12px}
    #panel dl.pairs dd:nth-of-type(2n){margin-right:0}
    #panel p{margin:6px 0;color:#e0b060}
    #token-form{display:flex;gap:6px}
    #token-form input{flex:1;min-width:0;background:#222;color:#eee;border:1px solid #444;border-radius:4px;padding:3px 6px}
    #token-form button{background:#333;color:#eee;border:1px solid #444;border-radius:4px}
    #chart{margin:4px 0 0}
    #chart svg{display:block;width:100%;height:60px;background:#1d1d1d;border-radius:4px}
    #chart path{fill:none;stroke-width:1.5;vector-effect:non-scaling-stroke}
    #chart .rule{stroke:#2c2c2c;vector-effect:non-scaling-stroke}
    #chart path.ratio{stroke:#4fc38a}
    #chart path.renders{stroke:#e0a040}
    #chart figcaption{color:#888;font-size:11px;margin-top:2px}
    .key::before{content:"";display:inline-block;width:10px;height:2px;vertical-align:middle;margin-right:4px}
    .key.ratio::before{background:#4fc38a}
    .key.renders::before{background:#e0a040}
    @media (max-width:760px){
      body{grid-template:"head" auto "grid" 1fr "panel" minmax(0,38vh) / 100%}
      #panel{border-left:0;border-top:1px solid #2a2a2a}
    }
    """#
}
