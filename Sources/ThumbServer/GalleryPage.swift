/// `GET /`: a small page that shows the library as a photo grid in a browser, built from
/// `/assets` and `/thumbnails/{grid}/…`, so a new user sees thumbnails at once. The column
/// buttons switch grids the way a phone app does (and stop the old grid's prefetch).
enum GalleryPage {
    static let html: [UInt8] = Array("""
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
    <title>thumbd</title>
    <style>
    body{font:14px system-ui,sans-serif;margin:0;background:#111;color:#ddd}
    header{padding:8px 12px;display:flex;gap:8px;align-items:center}
    button{background:#333;color:#ddd;border:0;padding:4px 10px;border-radius:4px}
    #grid{display:grid;gap:2px}
    #grid img{width:100%;aspect-ratio:1;object-fit:cover;display:block;background:#222}
    #grid.one img{aspect-ratio:auto}
    </style></head><body>
    <header><b>thumbd</b><span id="count"></span>
    <button data-columns="1">1</button><button data-columns="3">3</button><button data-columns="5">5</button></header>
    <div id="grid"></div>
    <script>
    const grid = document.getElementById('grid');
    let assets = [];
    function show(columns) {
      fetch('/prefetch', {method: 'DELETE'}).catch(() => {});
      grid.className = columns === 1 ? 'one' : '';
      grid.style.gridTemplateColumns = 'repeat(' + columns + ', 1fr)';
      grid.replaceChildren(...assets.map(a => {
        const img = new Image();
        img.loading = 'lazy';
        img.alt = a.path;
        img.src = '/thumbnails/' + columns + '/' + a.url;
        return img;
      }));
    }
    fetch('/assets?limit=10000').then(r => r.json()).then(page => {
      assets = page.items;
      document.getElementById('count').textContent = page.total + ' photos';
      show(3);
    });
    document.querySelectorAll('button').forEach(b => b.onclick = () => show(Number(b.dataset.columns)));
    </script></body></html>

    """.utf8)
}
