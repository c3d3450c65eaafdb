/* countgrid interactive map (docs/map.md).  Vanilla JavaScript, no dependencies: the page
 * must open from file:// with no network.  Every number shown comes from the data block that
 * countgrid.maps.map_data wrote; cell (r, c) is pi_[r, c] of the model (0-based, C order). */
(function () {
  "use strict";

  const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
  const MIN_FONT = 7;          // px: smaller words are not drawn (they would be noise)
  const BASE_CELL = "#fbfaf6";
  // The colour of every level comes with the data (countgrid._utils.palette: a Glasbey-style
  // palette, one colour per level up to 50 levels, grey for "other"), so the pictures of
  // countgrid.plotting and the page agree.
  const levelColor = (col, c) => [col.colors[3 * c], col.colors[3 * c + 1], col.colors[3 * c + 2]];
  const rgbCSS = (c) => `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
  // a light sequential ramp (yellow-green-blue) for continuous colourings
  const RAMP = [[255, 255, 204], [161, 218, 180], [65, 182, 196], [44, 127, 184], [37, 52, 148]];

  const $ = (id) => document.getElementById(id);
  const mod = (a, n) => ((a % n) + n) % n;

  // ------------------------------------------------------------------ untrusted text
  // Every text of the data reaches the page through textContent (or a property such as
  // option.value, or the canvas), never as markup.  Links were checked in Python
  // (countgrid.maps.safe_link); this second guard keeps the rule for a page edited by hand:
  // cleaned as browsers parse URLs (WHATWG), then only http:, https: or relative (no
  // scheme, not //host), at most MAX_LINK_CHARS; anything else is no link ("").
  const MAX_LINK_CHARS = 2048;    // countgrid.maps.MAX_LINK_CHARS
  function safeHref(link) {
    if (typeof link !== "string") return "";
    const url = link.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "").replace(/[\t\n\r]/g, "");
    if (!url || /[\u0000-\u001f\u007f]/.test(url)) return "";
    if (url.length > MAX_LINK_CHARS && Array.from(url).length > MAX_LINK_CHARS) return "";  // code points
    const scheme = /^[A-Za-z][A-Za-z0-9+.\-]*:/.exec(url);
    if (scheme) return /^https?:$/i.test(scheme[0]) ? url : "";
    return /^[\/\\]{2}/.test(url) ? "" : url;
  }
  // CSV export: a text cell starting with = + - @ tab or CR gets a leading apostrophe, so
  // that a spreadsheet shows it instead of running it as a formula (docs/map.md)
  const FORMULA_START = /^[=+\-@\t\r]/;

  // ------------------------------------------------------------------ data
  function base64ToBytes(text) {
    if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
    const bin = atob(text);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  const TYPES = { Uint8Array, Uint16Array, Uint32Array, Int32Array, Float32Array, Float64Array };

  // Arrays travel as {"$a": [type, offset, length]} into the binary blob, or
  // {"$a": [type, [values]]} in plain JSON (null = NaN there, as JSON has no NaN).
  function resolve(node, blob) {
    if (Array.isArray(node)) return node.map((v) => resolve(v, blob));
    if (node === null || typeof node !== "object") return node;
    if (node.$a) {
      const T = TYPES[node.$a[0]];
      if (Array.isArray(node.$a[1])) return T.from(node.$a[1], (v) => (v === null ? NaN : v));
      return new T(blob, node.$a[1], node.$a[2]);
    }
    const out = {};
    for (const k of Object.keys(node)) out[k] = resolve(node[k], blob);
    return out;
  }

  // A part of the data (docs/map.md, "Size and speed"): plain JSON, or gzip + base64 of
  // uint32 header length | JSON header | binary blob.
  async function decodePart(format, text) {
    if (format === "json") return resolve(JSON.parse(text), null);
    if (format !== "gzip") throw new Error(`unknown data format ${JSON.stringify(String(format)).slice(0, 40)}`);
    if (typeof DecompressionStream === "undefined") {
      throw new Error("This map is compressed and needs a browser with DecompressionStream " +
        "(Chrome 80+, Firefox 113+, Safari 16.4+).");
    }
    return decodeBinary(base64ToBytes(text.trim()), true);
  }
  // uint32 header length | JSON header | binary blob, gzip-compressed (a file's gzip part
  // once base64-decoded) or not (a notebook widget's parts, which arrive as bytes)
  async function decodeBinary(bytes, gzipped) {
    let buf = bytes instanceof ArrayBuffer ? bytes : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    if (gzipped) {
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      buf = await new Response(stream).arrayBuffer();
    }
    if (buf.byteLength < 4) throw new Error("the map's data are empty");
    const n = new DataView(buf).getUint32(0, true);
    const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 4, n)));
    // a copy starting at the blob: its typed arrays are then aligned (offsets are 8-aligned)
    return resolve(header, buf.slice(4 + n));
  }

  // ------------------------------------------------------------------ host (notebook widget)
  // A page whose data block has format "host" is the map of countgrid's notebook widget
  // (countgrid.maps.widget; docs/map.md, "The notebook widget"): it runs in a sandboxed
  // frame and gets its two parts as bytes from the frame's parent (the widget's module,
  // assets/widget.js), to which it reports selections and colourings; the parent sends
  // highlights and colourings set from Python.  Only messages of the parent count.  A
  // large corpus's widget first shows its map without documents (documents: null, a
  // "preview"), then the whole map in a second frame that takes the first one's place and
  // view (assets/widget.js).
  const HOST = (() => { const el = $("cg-data"); return el !== null && el.dataset.format === "host"; })();
  const toHost = (msg) => { if (HOST) window.parent.postMessage(msg, "*"); };
  let hostParts = null, hostDataMs = null;
  if (HOST) {
    let got = false;
    hostParts = new Promise((ok, failed) => {
      window.addEventListener("message", (e) => {
        const m = e.data;
        if (got || e.source !== window.parent || !m || typeof m !== "object" || m.type !== "countgrid:data") return;
        got = true;
        hostDataMs = performance.now();
        if (!(m.map instanceof ArrayBuffer) || !(m.documents instanceof ArrayBuffer || m.documents === null)) { failed(new Error("the widget sent no data")); return; }
        ok(m);
      });
    });
    toHost({ type: "countgrid:hello" });
  }

  function loadData() {
    if (HOST) return hostParts.then((m) => decodeBinary(m.map, false));
    const el = $("cg-data");
    return decodePart(el.dataset.format, el.textContent);
  }

  // The documents part: in a single file, the block after this script (read once the page
  // is parsed, after the first frame); in a bundle, chunk files of consecutive documents,
  // each a script that hands its part to countgridChunk (<script> works from file://, where
  // fetch does not).  onPart(k, part) is called as each arrives, in order.
  function loadDocuments(D, onPart) {
    // a preview's documents never come here: its frame gives way to the whole map's
    if (HOST) return hostParts.then((m) => m.documents === null ? new Promise(() => {}) : decodeBinary(m.documents, false)).then((part) => { onPart(0, part); });
    if (!D.bundle) {
      const parsed = document.readyState === "loading"
        ? new Promise((ok) => document.addEventListener("DOMContentLoaded", ok, { once: true }))
        : Promise.resolve();
      return parsed.then(() => {
        const el = $("cg-documents");
        if (!el) throw new Error("the page has no documents block (cut short?)");
        return decodePart(el.dataset.format, el.textContent);
      }).then((part) => { onPart(0, part); });
    }
    const files = D.bundle.files;
    return new Promise((done, failed) => {
      let k = 0;
      window.countgridChunk = (i, format, text) => {
        if (i !== k) { failed(new Error(`chunk ${i} arrived in place of chunk ${k}`)); return; }
        decodePart(format, text).then((part) => { onPart(k, part); k++; next(); }, failed);
      };
      function next() {
        if (k === files.length) { delete window.countgridChunk; done(); return; }
        const tag = document.createElement("script");
        tag.src = files[k];
        tag.onerror = () => failed(new Error(`could not read ${files[k]} (is the bundle's folder complete?)`));
        tag.onload = () => tag.remove();
        document.head.appendChild(tag);
      }
      next();
    });
  }

  // The parts of a bundle joined into the arrays of one documents part (doc_offsets
  // rebased); a single part is used as it is.
  function joinParts(parts) {
    if (parts.length === 1) return parts[0];
    const join = (arrays) => {
      if (arrays.some((a) => a === null || a === undefined)) return null;
      if (Array.isArray(arrays[0])) return [].concat(...arrays);
      const out = new arrays[0].constructor(arrays.reduce((s, a) => s + a.length, 0));
      let at = 0;
      for (const a of arrays) { out.set(a, at); at += a.length; }
      return out;
    };
    const out = {};
    for (const key of Object.keys(parts[0])) {
      if (key === "colorings" || key === "time" || key === "doc_offsets") continue;
      out[key] = join(parts.map((p) => p[key]));
    }
    const n = parts.reduce((s, p) => s + p.doc_offsets.length - 1, 0);
    const off = new Uint32Array(n + 1);
    let t = 0, base = 0;
    for (const p of parts) {
      const o = p.doc_offsets;
      for (let j = 1; j < o.length; j++) off[t + j] = base + o[j];
      t += o.length - 1; base += o[o.length - 1];
    }
    out.doc_offsets = off;
    out.colorings = parts[0].colorings.map((c, k) => {
      const col = {};
      for (const key of Object.keys(c)) col[key] = join(parts.map((p) => p.colorings[k][key]));
      return col;
    });
    if (parts[0].time) out.time = { doc_periods: join(parts.map((p) => p.time.doc_periods)) };
    return out;
  }

  // ------------------------------------------------------------------ colours
  const mix = (a, b, t) => [0, 1, 2].map((k) => a[k] + (b[k] - a[k]) * t);
  const css = (rgb) => "rgb(" + rgb.map((v) => Math.round(v)).join(",") + ")";
  const WHITE = [255, 255, 255];

  function rampColor(t) {
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    const x = t * (RAMP.length - 1), k = Math.min(RAMP.length - 2, Math.floor(x));
    return mix(RAMP[k], RAMP[k + 1], x - k);
  }

  // Cell colours of a colouring (an array of L rgb triples).  Categorical: with up to three
  // levels the level colours are mixed by the cell's distribution (as the RGB label maps of
  // the counting-grid papers); with more, the dominant level's colour, stronger the more it
  // dominates.  Everything is mixed with white so that dark text stays readable.
  function colouringRGB(col, L) {
    const out = new Array(L);
    if (col.kind === "categorical") {
      const C = col.levels.length, P = col.values;
      for (let i = 0; i < L; i++) {
        let rgb;
        if (C <= 3) {
          rgb = [0, 0, 0];
          for (let c = 0; c < C; c++) for (let k = 0; k < 3; k++) rgb[k] += P[i * C + c] * levelColor(col, c)[k];
          rgb = mix(WHITE, rgb, 0.55);
        } else {
          let best = 0;
          for (let c = 1; c < C; c++) if (P[i * C + c] > P[i * C + best]) best = c;
          const strength = Math.max(0, Math.min(1, (P[i * C + best] - 1 / C) / (1 - 1 / C)));
          // cells where "other" (the levels not chosen) dominates stay pale: they are the
          // background of the chosen levels
          const other = col.lumped && best === C - 1;
          rgb = mix(WHITE, levelColor(col, best), other ? 0.2 : 0.2 + 0.55 * strength);
        }
        out[i] = rgb;
      }
    } else if (col.kind === "time") {
      for (let i = 0; i < L; i++) out[i] = mix(WHITE, rampColor(col.values[i] / col.vmax), 0.12 + 0.6 * Math.min(1, col.values[i] / col.vmax));
    } else if (col.kind === "difference") {
      for (let i = 0; i < L; i++) {
        const t = Math.max(-1, Math.min(1, col.values[i] / col.vmax));
        out[i] = mix(WHITE, t >= 0 ? col.colorA : col.colorB, 0.08 + 0.62 * Math.abs(t));
      }
    } else {
      const span = col.vmax - col.vmin;
      for (let i = 0; i < L; i++) {
        const v = col.values[i];
        out[i] = Number.isFinite(v) ? mix(WHITE, rampColor(span > 0 ? (v - col.vmin) / span : 0.5), 0.6)
          : [232, 232, 232];
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ the map
  function start(D) {
    const E1 = D.extent[0], E2 = D.extent[1], W1 = D.window[0], W2 = D.window[1];
    const L = E1 * E2, N = D.n_documents, K = D.top_words.length / L;
    const vocab = D.vocabulary;
    const wordIndex = new Map(), lowerIndex = new Map();
    vocab.forEach((w, j) => {
      if (!wordIndex.has(w)) wordIndex.set(w, j);
      const lw = w.toLowerCase();
      if (!lowerIndex.has(lw)) lowerIndex.set(lw, j);
    });
    let wmax = 0;
    for (let j = 0; j < D.top_weights.length; j++) wmax = Math.max(wmax, D.top_weights[j]);
    // (and every period's words of a time-sliced grid: one font scale for all periods)
    if (D.time && D.time.top_weights) for (const v of D.time.top_weights) wmax = Math.max(wmax, v);
    if (!(wmax > 0)) wmax = 1;
    // the ranking score of a stored word (pi * f); maps of 0.2 hold only top_weights
    const score = D.top_scores ? (e) => D.top_scores[e] : (e) => D.top_weights[e];

    const canvas = $("cg-canvas"), ctx = canvas.getContext("2d");
    const stage = $("cg-stage");
    let cw = 0, ch = 0, dpr = 1;
    const view = { s: 20, ox: 0, oy: 0, fit: 20 };
    let ready = false;      // the fragment is written only once a given one was read
    const state = {
      highlight: null, highlightList: [], terms: new Set(), pinned: -1, listed: [], scores: [],
      hoverDoc: -1, colouring: null, cellRGB: null, cellCSS: null, placedLabels: [], query: "",
      docResults: [], selection: null, rubber: null,
      lasso: null,            // the lasso being drawn: canvas pixels [x, y]
      selRect: null,          // the selected rectangle [r0, c0, r1, c1] (view rows/columns)
      docFilter: null,        // Uint8Array: 1 for the documents kept (time range, filters); null: all
      dim: null,              // per cell, 1 - how much it fades (filters); null: nothing fades
      notes: new Map(),       // cell -> note (docs/map.md, "Names and notes")
    };
    for (const n of D.notes || []) if (n.cell >= 0 && n.cell < L) state.notes.set(n.cell, String(n.text));
    const shown = (t) => state.docFilter === null || state.docFilter[t] === 1;
    let docsIn = false, pendingCall = null;     // the documents part (attachDocuments)

    // header
    const fmt = (x) => x.toLocaleString("en-US");
    let stats = `${E1} × ${E2} grid · window ${W1} × ${W2} · ${fmt(N)} documents`;
    if (D.n_documents_total > N) stats += ` (a sample of ${fmt(D.n_documents_total)})`;
    const RANKED = { relevance: ` · words by relevance (λ = ${D.relevance_lambda})`,
      probability: " · most probable words", lift: " · words by lift", idf: " · idf-weighted",
      custom: " · words by custom weights" };
    if (D.time && D.time.grids) stats += ` · one grid per ${D.time.period}`;
    stats += ` · ${fmt(D.n_features)} words` + (RANKED[D.weighting] || (D.idf ? RANKED.idf : ""));
    $("cg-stats").textContent = stats;
    // a layered grid (docs/map.md, "Layered grids"): each word drawn in its layer's colour
    const wordLayer = D.layers ? D.layers.top_layers : null;
    // (darkened by 40 %: the words stay readable on cells tinted in the same palette)
    const layerCSS = D.layers ? D.layers.names.map((_, l) => rgbCSS(levelColor(D.layers, l)
      .map((v) => Math.round(0.6 * v)))) : null;
    if (D.layers) {
      const key = $("cg-layers");
      key.textContent = `${D.layers.names.length} layers · words of `;
      D.layers.names.forEach((name, l) => {
        const span = document.createElement("span");
        span.className = "cg-layer-key";
        span.style.color = layerCSS[l];
        span.textContent = (l ? ", " : "") + name;
        key.appendChild(span);
      });
      key.hidden = false;
    }

    // ---- geometry
    function resize() {
      const r = stage.getBoundingClientRect();
      // A page with no size yet (a hidden notebook output, a frame not laid out) is not
      // fitted: a view fitted to one pixel drew ~10^8 copies of the cells once the page
      // got its size, and the tab hung.  The view is fitted at the first real size.
      if (r.width < 1 || r.height < 1) return;
      const cx = view.ox + cw / 2 / view.s, cy = view.oy + ch / 2 / view.s;
      const first = cw === 0;
      cw = Math.floor(r.width);
      ch = Math.floor(r.height);
      dpr = window.devicePixelRatio || 1;
      canvas.width = Math.round(cw * dpr);
      canvas.height = Math.round(ch * dpr);
      view.fit = Math.min(cw / E2, ch / E1);
      if (first) { fitView(); return; }
      view.s = Math.max(view.s, view.fit * 0.5);   // zoomAt's floor, as the page grows
      view.ox = cx - cw / 2 / view.s;
      view.oy = cy - ch / 2 / view.s;
    }
    function fitView() {
      view.s = view.fit;
      view.ox = -(cw / view.s - E2) / 2;
      view.oy = -(ch / view.s - E1) / 2;
    }
    function zoomAt(px, py, factor) {
      const s = Math.max(view.fit * 0.5, Math.min(Math.max(view.fit * 24, 60), view.s * factor));
      const wx = view.ox + px / view.s, wy = view.oy + py / view.s;
      view.s = s;
      view.ox = wx - px / s;
      view.oy = wy - py / s;
    }
    // canvas pixel -> [row, col, flat] on the torus
    function cellAt(px, py) {
      const r = mod(Math.floor(view.oy + py / view.s), E1), c = mod(Math.floor(view.ox + px / view.s), E2);
      return [r, c, r * E2 + c];
    }
    // canvas pixel of the centre of the on-screen copy of (r, c) nearest the view centre
    function cellCenter(r, c) {
      const mx = view.ox + cw / 2 / view.s, my = view.oy + ch / 2 / view.s;
      const x = c + E2 * Math.round((mx - c - 0.5) / E2), y = r + E1 * Math.round((my - r - 0.5) / E1);
      return [(x + 0.5 - view.ox) * view.s, (y + 0.5 - view.oy) * view.s];
    }

    // ---- words
    const widthCache = new Map();
    function textWidth(word, size, bold) {   // widths scale linearly with the font size
      const key = (bold ? "b" : "n") + word;
      let w = widthCache.get(key);
      if (w === undefined) {
        ctx.font = `${bold ? 700 : 500} 100px ${FONT}`;
        w = ctx.measureText(word).width / 100;
        widthCache.set(key, w);
      }
      return w * size;
    }

    // ---- drawing
    function draw() {
      if (cw === 0) return;   // no size yet (resize)
      if (ready) rememberView();
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.fillStyle = "#ece9e1";
      ctx.fillRect(0, 0, cw, ch);
      const s = view.s;
      const x0 = Math.floor(view.ox), x1 = Math.ceil(view.ox + cw / s);
      const y0 = Math.floor(view.oy), y1 = Math.ceil(view.oy + ch / s);
      const searching = state.highlight !== null;
      // cell backgrounds
      for (let y = y0; y < y1; y++) {
        const r = mod(y, E1), py = (y - view.oy) * s;
        for (let x = x0; x < x1; x++) {
          const i = r * E2 + mod(x, E2);
          ctx.fillStyle = state.cellCSS ? state.cellCSS[i] : BASE_CELL;
          ctx.fillRect((x - view.ox) * s, py, s + 0.5, s + 0.5);
        }
      }
      // search hits
      if (searching) {
        ctx.fillStyle = "rgba(245, 158, 11, 0.38)";
        for (let y = y0; y < y1; y++) {
          const r = mod(y, E1), py = (y - view.oy) * s;
          for (let x = x0; x < x1; x++) {
            if (state.highlight[r * E2 + mod(x, E2)]) ctx.fillRect((x - view.ox) * s, py, s, s);
          }
        }
      }
      // the cells where two groups differ (compare): outlined
      if (state.colouring && state.colouring.kind === "difference") {
        ctx.strokeStyle = "rgba(17, 24, 39, 0.85)";
        ctx.lineWidth = Math.max(1, Math.min(2.5, s / 12));
        for (let y = y0; y < y1; y++) {
          const r = mod(y, E1), py = (y - view.oy) * s;
          for (let x = x0; x < x1; x++) {
            if (state.colouring.marked[r * E2 + mod(x, E2)]) ctx.strokeRect((x - view.ox) * s + 1, py + 1, s - 2, s - 2);
          }
        }
      }
      // grid lines, and darker seams where the torus wraps (between index E-1 and 0)
      if (s >= 5) {
        ctx.strokeStyle = "rgba(60, 50, 30, 0.10)";
        ctx.lineWidth = 1;
        ctx.beginPath();
        for (let x = x0; x <= x1; x++) { const px = Math.round((x - view.ox) * s) + 0.5; ctx.moveTo(px, 0); ctx.lineTo(px, ch); }
        for (let y = y0; y <= y1; y++) { const py = Math.round((y - view.oy) * s) + 0.5; ctx.moveTo(0, py); ctx.lineTo(cw, py); }
        ctx.stroke();
      }
      ctx.strokeStyle = "rgba(60, 50, 30, 0.35)";
      ctx.setLineDash([4, 4]);
      ctx.beginPath();
      for (let x = Math.ceil(x0 / E2) * E2; x <= x1; x += E2) { const px = Math.round((x - view.ox) * s) + 0.5; ctx.moveTo(px, 0); ctx.lineTo(px, ch); }
      for (let y = Math.ceil(y0 / E1) * E1; y <= y1; y += E1) { const py = Math.round((y - view.oy) * s) + 0.5; ctx.moveTo(0, py); ctx.lineTo(cw, py); }
      ctx.stroke();
      ctx.setLineDash([]);
      const level = regionLevel();
      drawWords(x0, x1, y0, y1, searching, level !== null);
      // filters: cells that hold little of the kept documents' mass fade (with their words)
      if (state.dim) {
        for (let y = y0; y < y1; y++) {
          const r = mod(y, E1), py = (y - view.oy) * s;
          for (let x = x0; x < x1; x++) {
            const a = 0.82 * (1 - state.dim[r * E2 + mod(x, E2)]);
            if (a > 0.01) { ctx.fillStyle = `rgba(246, 245, 241, ${a.toFixed(3)})`; ctx.fillRect((x - view.ox) * s, py, s + 0.5, s + 0.5); }
          }
        }
      }
      if (level !== null) drawRegions(level, x0, x1, y0, y1);
      else state.placedLabels = [];
      // the hovered document's window, in every visible copy
      if (state.hoverDoc >= 0) {
        const k = D.doc_map[state.hoverDoc], kr = Math.floor(k / E2), kc = k % E2;
        ctx.lineWidth = 2.5;
        ctx.strokeStyle = "#2563eb";
        ctx.fillStyle = "rgba(37, 99, 235, 0.10)";
        for (let y = kr + E1 * Math.floor((y0 - kr - W1) / E1); y < y1; y += E1) {
          for (let x = kc + E2 * Math.floor((x0 - kc - W2) / E2); x < x1; x += E2) {
            const px = (x - view.ox) * s, py = (y - view.oy) * s;
            ctx.fillRect(px, py, W2 * s, W1 * s);
            ctx.strokeRect(px + 1, py + 1, W2 * s - 2, W1 * s - 2);
          }
        }
      }
      // the selected cells and the rectangle being dragged
      if (state.selection) {
        const sel = state.selection;
        ctx.fillStyle = "rgba(37, 99, 235, 0.16)";
        for (let y = y0; y < y1; y++) {
          const r = mod(y, E1), py = (y - view.oy) * s;
          for (let x = x0; x < x1; x++) if (sel[r * E2 + mod(x, E2)]) ctx.fillRect((x - view.ox) * s, py, s, s);
        }
        // and its outline, which a colouring's tints do not hide
        ctx.strokeStyle = "#1d4ed8";
        ctx.lineWidth = 2;
        strokeBorders(sel, x0, x1, y0, y1);
      }
      if (state.rubber) {
        const [ax, ay, bx, by] = state.rubber;
        ctx.strokeStyle = "#2563eb"; ctx.lineWidth = 1.5; ctx.setLineDash([5, 3]);
        ctx.strokeRect(Math.min(ax, bx), Math.min(ay, by), Math.abs(bx - ax), Math.abs(by - ay));
        ctx.setLineDash([]);
      }
      if (state.lasso && state.lasso.length > 1) {
        ctx.strokeStyle = "#2563eb"; ctx.lineWidth = 1.5; ctx.setLineDash([5, 3]);
        ctx.fillStyle = "rgba(37, 99, 235, 0.08)";
        ctx.beginPath();
        state.lasso.forEach(([x, y], k) => (k ? ctx.lineTo(x, y) : ctx.moveTo(x, y)));
        ctx.closePath(); ctx.fill(); ctx.stroke();
        ctx.setLineDash([]);
      }
      // notes: a folded corner on each noted cell
      if (state.notes.size) {
        ctx.fillStyle = "#d97706";
        const m = Math.max(4, Math.min(12, s / 4));
        for (const i of state.notes.keys()) {
          const nr = Math.floor(i / E2), nc = i % E2;
          for (let y = nr + E1 * Math.floor((y0 - nr - 1) / E1); y < y1; y += E1) {
            for (let x = nc + E2 * Math.floor((x0 - nc - 1) / E2); x < x1; x += E2) {
              const px = (x + 1 - view.ox) * s, py = (y - view.oy) * s;
              ctx.beginPath(); ctx.moveTo(px - m, py); ctx.lineTo(px, py); ctx.lineTo(px, py + m); ctx.closePath(); ctx.fill();
            }
          }
        }
      }
      // the pinned cell
      if (state.pinned >= 0) {
        const pr = Math.floor(state.pinned / E2), pc = state.pinned % E2;
        ctx.lineWidth = 2.5;
        ctx.strokeStyle = "#c2410c";
        for (let y = pr + E1 * Math.floor((y0 - pr - 1) / E1); y < y1; y += E1) {
          for (let x = pc + E2 * Math.floor((x0 - pc - 1) / E2); x < x1; x += E2) {
            const px = (x - view.ox) * s, py = (y - view.oy) * s;
            ctx.strokeRect(px + 1.25, py + 1.25, s - 2.5, s - 2.5);
            ctx.fillStyle = "#c2410c";
            ctx.beginPath();
            ctx.arc(px + s / 2, py + Math.min(6, s / 4), Math.max(2.5, Math.min(5, s / 8)), 0, 2 * Math.PI);
            ctx.fill();
          }
        }
      }
    }

    // ---- selection (docs/map.md, "Select cells"): shift-drag a rectangle (it may cross
    // the seam: rows r0..r1 and columns c0..c1 of the unbounded view, taken modulo the
    // extent), or draw a lasso (alt-drag, or any drag while "Lasso" is on: the cells whose
    // centres it encloses); the documents whose most probable window is centred in a
    // selected cell are listed with the mix of the shown categorical colouring, and
    // exported as CSV.
    function selectRect(r0, c0, r1, c1) {
      const cells = new Uint8Array(L);
      const h = Math.min(r1 - r0 + 1, E1), w = Math.min(c1 - c0 + 1, E2);
      for (let a = 0; a < h; a++) for (let b = 0; b < w; b++) cells[mod(r0 + a, E1) * E2 + mod(c0 + b, E2)] = 1;
      const docs = selectCells(cells);
      state.selRect = [r0, c0, r1, c1];
      return docs;
    }
    // points: [row, col] of the unbounded view (cell (r, c) spans [r, r + 1) x [c, c + 1))
    function selectLasso(points) {
      const pts = (Array.isArray(points) ? points : []).slice(0, 100000)
        .map((p) => [Number(p[0]), Number(p[1])]).filter((p) => Number.isFinite(p[0]) && Number.isFinite(p[1]));
      const cells = new Uint8Array(L);
      if (pts.length >= 3) {
        let ylo = Infinity, yhi = -Infinity, xlo = Infinity, xhi = -Infinity;
        for (const [y, x] of pts) { ylo = Math.min(ylo, y); yhi = Math.max(yhi, y); xlo = Math.min(xlo, x); xhi = Math.max(xhi, x); }
        // a lasso larger than the torus selects every cell it reaches once
        const y0 = Math.floor(ylo), y1 = Math.min(Math.ceil(yhi), y0 + 4 * E1), x0 = Math.floor(xlo), x1 = Math.min(Math.ceil(xhi), x0 + 4 * E2);
        for (let y = y0; y < y1; y++) {
          for (let x = x0; x < x1; x++) {
            const cy = y + 0.5, cx = x + 0.5;
            let inside = false;        // even-odd rule
            for (let a = 0, b = pts.length - 1; a < pts.length; b = a++) {
              const [ya, xa] = pts[a], [yb, xb] = pts[b];
              if ((ya > cy) !== (yb > cy) && cx < xa + (cy - ya) * (xb - xa) / (yb - ya)) inside = !inside;
            }
            if (inside) cells[mod(y, E1) * E2 + mod(x, E2)] = 1;
          }
        }
      }
      const docs = selectCells(cells);
      state.selRect = null;       // a lasso is not written in the address (viewState)
      return docs;
    }
    function selectCells(cells) {
      let n = 0;
      for (let i = 0; i < L; i++) n += cells[i];
      const docs = [];
      for (let t = 0; t < N; t++) if (cells[windowCentre(t)] && shown(t)) docs.push(t);
      state.selection = cells;
      state.listed = docs.slice(0, D.list_length);
      state.scores = state.listed.map(() => 1);
      state.pinned = -1;
      const info = $("cg-panel-info");
      let mix = "";
      const col = state.colouring && state.colouring.kind === "categorical" ? state.colouring : null;
      if (col && docs.length) {
        const byLevel = new Map();
        for (const t of docs) { const v = col.doc_levels ? col.levels[col.doc_levels[t]] : null; if (v !== null) byLevel.set(v, (byLevel.get(v) || 0) + 1); }
        mix = [...byLevel.entries()].sort((p, q) => q[1] - p[1]).slice(0, 6)
          .map(([v, k]) => `${v} ${(100 * k / docs.length).toFixed(0)} %`).join(", ");
      }
      renderSelection(docs);
      info.textContent = `${fmt(n)} cell${n === 1 ? "" : "s"} selected: ${fmt(docs.length)} document${docs.length === 1 ? "" : "s"}${time.on ? " of " + rangeName(time.p0, time.p1) : ""} centred there` +
        (state.listed.length < docs.length ? `, the first ${state.listed.length} listed` : "") + (mix ? ` · ${mix}` : "") + ". CSV exports the list.";
      $("cg-csv").disabled = !state.listed.length;
      showNote();
      draw();
      tellSelection("cells", cells);
      return docs.map((t) => D.doc_index[t]);
    }
    // the widget's w.selection (countgrid.maps.MapWidget): the cells, and the documents
    // the page keeps when a time range or a filter hides some (Python ranks them itself)
    function tellSelection(kind, cells) {
      if (!HOST) return;
      const list = [];
      if (kind === "cell") list.push(cells);
      else for (let i = 0; i < L; i++) if (cells[i]) list.push(i);
      let kept = null;
      if (state.docFilter !== null) { kept = []; for (let t = 0; t < N; t++) if (shown(t)) kept.push(D.doc_index[t]); }
      toHost({ type: "countgrid:selection", kind, cells: list, kept });
    }
    function renderSelection(docs) {
      const ol = $("cg-docs");
      ol.textContent = "";
      const frag = document.createDocumentFragment();
      for (const t of docs.slice(0, D.list_length)) {
        const li = document.createElement("li");
        li.dataset.doc = String(t);
        const i = windowCentre(t);
        li.append(Object.assign(document.createElement("div"), { className: "cg-doc-title", textContent: D.titles[t] }),
          Object.assign(document.createElement("div"), { className: "cg-doc-meta", textContent: `cell (${Math.floor(i / E2)}, ${i % E2}) · id ${D.ids[t]}` }));
        if (D.snippets[t]) li.appendChild(Object.assign(document.createElement("div"), { className: "cg-snippet", textContent: D.snippets[t] }));
        li.addEventListener("mouseenter", () => { state.hoverDoc = t; scheduleDraw(); });
        li.addEventListener("mouseleave", () => { state.hoverDoc = -1; scheduleDraw(); });
        frag.appendChild(li);
      }
      ol.appendChild(frag);
    }

    // Each cell shows its words in the order of the ranking (relevance by default: the
    // data's top_scores), as many as fit: the font grows with sqrt(pi / largest pi of the
    // shown words of the map), so zooming in shows more words.
    // When cells are too small for text, blocks of up to step x step cells show the best
    // words of the block instead, so the zoomed-out map stays labelled (as the word grids
    // of the papers).  Blocks tile each period of the torus from cell 0 (the last one of a
    // period is narrower when step does not divide the extent): panning by a whole extent
    // changes nothing.
    const LABEL_CELL = 42;   // px: below this cell size, words are drawn per block

    // Regions (docs/map.md, "Regions"): zoomed out, where cells show words per block, the
    // map draws the borders of a level of regions and names them at their anchors; the
    // level is the finest whose regions span REGION_PX on screen (the coarsest when none
    // does).  Names are placed largest region first and skipped where they would overlap
    // a name already placed, in every visible copy of the torus.
    const REGION_PX = 150;
    const LEVELS = (D.regions || []).slice().sort((a, b) => a.n_regions - b.n_regions);
    function regionLevel() {
      if (!LEVELS.length || view.s >= LABEL_CELL) return null;
      let chosen = LEVELS[0];
      for (const lev of LEVELS) if (view.s * Math.sqrt(L / lev.n_regions) >= REGION_PX) chosen = lev;
      return chosen;
    }
    // the edges between cells of different labels (regions, a selection) in the visible
    // cells, in the current stroke style
    function strokeBorders(lab, x0, x1, y0, y1) {
      const s = view.s;
      ctx.beginPath();
      for (let y = y0; y < y1; y++) {
        const r = mod(y, E1), py = (y - view.oy) * s;
        for (let x = x0; x < x1; x++) {
          const c = mod(x, E2), i = r * E2 + c, px = (x - view.ox) * s;
          if (lab[i] !== lab[r * E2 + mod(c + 1, E2)]) { ctx.moveTo(px + s, py); ctx.lineTo(px + s, py + s); }
          if (lab[i] !== lab[mod(r + 1, E1) * E2 + c]) { ctx.moveTo(px, py + s); ctx.lineTo(px + s, py + s); }
        }
      }
      ctx.stroke();
    }
    function drawRegions(lev, x0, x1, y0, y1) {
      const s = view.s, lab = lev.labels;
      ctx.strokeStyle = "rgba(40, 32, 20, 0.55)";
      ctx.lineWidth = 1.5;
      strokeBorders(lab, x0, x1, y0, y1);
      const sizes = new Array(lev.n_regions).fill(0);
      for (let i = 0; i < L; i++) sizes[lab[i]]++;
      const order = sizes.map((n, k) => k).sort((a, b) => sizes[b] - sizes[a] || a - b);
      const placed = [], size = 14;
      ctx.font = `700 ${size}px ${FONT}`;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.lineJoin = "round";
      for (const k of order) {
        const a = lev.anchors[k], ar = Math.floor(a / E2), ac = a % E2, text = lev.names[k];
        const w = ctx.measureText(text).width + 8, h = size + 6;
        for (let y = ar + E1 * Math.floor((y0 - ar - 1) / E1); y < y1 + 1; y += E1) {
          for (let x = ac + E2 * Math.floor((x0 - ac - 1) / E2); x < x1 + 1; x += E2) {
            const cx = (x + 0.5 - view.ox) * s, cy = (y + 0.5 - view.oy) * s;
            const box = { text, region: k, x: cx - w / 2, y: cy - h / 2, w, h };
            if (box.x + w < 0 || box.y + h < 0 || box.x > cw || box.y > ch) continue;
            if (placed.some((b) => b.x < box.x + box.w && box.x < b.x + b.w && b.y < box.y + box.h && box.y < b.y + b.h)) continue;
            placed.push(box);
            ctx.lineWidth = 4;
            ctx.strokeStyle = "rgba(255, 255, 255, 0.9)";
            ctx.strokeText(text, cx, cy);
            ctx.fillStyle = "#111827";
            ctx.fillText(text, cx, cy);
          }
        }
      }
      state.placedLabels = placed.map((b) => ({ ...b, level: lev.n_regions }));
    }

    // the region list (the coarsest level, largest first): a click flies to the region's
    // anchor, at a zoom where the level's names show, and lists the documents there
    function flyToRegion(k) {
      const lev = LEVELS[0], a = lev.anchors[k];
      const want = Math.min(LABEL_CELL - 1, REGION_PX / Math.sqrt(L / lev.n_regions));
      view.s = Math.max(view.s, want);
      if (view.s >= LABEL_CELL) view.s = LABEL_CELL - 1;
      const r = Math.floor(a / E2), c = a % E2;
      view.ox = c + 0.5 - cw / 2 / view.s;
      view.oy = r + 0.5 - ch / 2 / view.s;
      pin(r, c);
      return [r, c];
    }
    // ---- names and notes (docs/map.md, "Names and notes"): a region of the listed level
    // renamed in the page, a note pinned to a cell; saved to and loaded from a small JSON
    // file (countgrid.maps.read_annotations reads it back; write_html(annotations=) applies
    // it to a later map).  A loaded file comes from anyone: its fields are checked and cut.
    const MAX_NOTE = 1000, MAX_NAME = 100, MAX_ITEMS = 1000;
    const renamed = new Set((LEVELS.length && LEVELS[0].renamed) || []);
    const clean = (v, n) => { const t = String(v).split(/\s+/).filter(Boolean).join(" "); return t.length > n ? t.slice(0, n - 1) + "\u2026" : t; };
    function renameRegion(k, text) {
      if (!LEVELS.length || !(k >= 0 && k < LEVELS[0].n_regions)) return null;
      const t = clean(text, MAX_NAME);
      if (!t) return LEVELS[0].names[k];
      LEVELS[0].names[k] = t;
      renamed.add(k);
      const span = document.querySelector(`#cg-regions li[data-region="${k}"] .cg-region-name`);
      if (span) span.textContent = t;
      draw();
      return t;
    }
    function startRename(k, span) {
      const input = Object.assign(document.createElement("input"), { type: "text", value: LEVELS[0].names[k], maxLength: MAX_NAME });
      input.className = "cg-rename-input";
      input.addEventListener("click", (e) => e.stopPropagation());
      let finished = false;     // replacing the input blurs it: finish once
      const done = (keep) => { if (finished) return; finished = true; input.replaceWith(span); if (keep) renameRegion(k, input.value); };
      input.addEventListener("keydown", (e) => { if (e.key === "Enter") done(true); else if (e.key === "Escape") done(false); });
      input.addEventListener("blur", () => done(true));
      span.replaceWith(input);
      input.focus(); input.select();
    }
    function setNote(cell, text) {
      cell = Math.floor(Number(cell));
      if (!(cell >= 0 && cell < L)) return null;
      const t = clean(text, MAX_NOTE);
      if (t) state.notes.set(cell, t); else state.notes.delete(cell);
      if (state.pinned === cell) showNote();
      draw();
      return t || null;
    }
    function showNote() {
      const box = $("cg-note");
      box.hidden = state.pinned < 0;
      $("cg-note-text").value = state.notes.get(state.pinned) || "";
    }
    function annotations() {
      const lev = LEVELS[0];
      return {
        countgrid_annotations: 1, extent: [E1, E2],
        regions: lev ? [...renamed].sort((a, b) => a - b).map((k) => ({ n_regions: lev.n_regions, anchor: [Math.floor(lev.anchors[k] / E2), lev.anchors[k] % E2], name: lev.names[k] })) : [],
        notes: [...state.notes].sort((a, b) => a[0] - b[0]).map(([i, text]) => ({ cell: [Math.floor(i / E2), i % E2], text })),
      };
    }
    // apply a loaded file; returns an error message, or "" when it was applied
    function loadAnnotations(doc) {
      const isCell = (v) => Array.isArray(v) && v.length === 2 && v.every((x) => Number.isInteger(x)) && v[0] >= 0 && v[0] < E1 && v[1] >= 0 && v[1] < E2;
      if (!doc || typeof doc !== "object" || doc.countgrid_annotations !== 1) return "not a countgrid notes file";
      if (!Array.isArray(doc.extent) || doc.extent[0] !== E1 || doc.extent[1] !== E2) return `written for another grid than this ${E1} × ${E2} one`;
      const regs = Array.isArray(doc.regions) ? doc.regions.slice(0, MAX_ITEMS) : [];
      const notes = Array.isArray(doc.notes) ? doc.notes.slice(0, MAX_ITEMS) : [];
      let applied = 0;
      for (const r of regs) {
        if (!r || typeof r !== "object" || typeof r.name !== "string" || !isCell(r.anchor)) continue;
        const lev = LEVELS.find((l) => l.n_regions === r.n_regions);
        if (!lev || lev !== LEVELS[0]) continue;
        if (renameRegion(lev.labels[r.anchor[0] * E2 + r.anchor[1]], r.name) !== null) applied++;
      }
      for (const n of notes) {
        if (!n || typeof n !== "object" || typeof n.text !== "string" || !isCell(n.cell)) continue;
        setNote(n.cell[0] * E2 + n.cell[1], n.text); applied++;
      }
      return applied ? "" : "nothing in the file applies to this map";
    }
    function renderRegions() {
      if (!LEVELS.length) return;
      const lev = LEVELS[0], ol = $("cg-regions");
      const sizes = new Array(lev.n_regions).fill(0);
      for (let i = 0; i < L; i++) sizes[lev.labels[i]]++;
      $("cg-regions-info").textContent = `${lev.n_regions}, largest first` + (T && P > 1 ? `; their share of each ${T.period}` : "");
      const shares = T && P > 1 ? regionShares(lev) : null;
      for (let k = 0; k < lev.n_regions; k++) {
        const li = document.createElement("li");
        li.dataset.region = String(k);
        const share = lev.doc_share ? `${(100 * lev.doc_share[k]).toFixed(1)} % of documents · ` : "";
        const name = Object.assign(document.createElement("span"), { className: "cg-region-name", textContent: lev.names[k] });
        const edit = Object.assign(document.createElement("button"), { type: "button", className: "cg-rename", textContent: "\u270E", title: "Rename this region" });
        edit.addEventListener("click", (e) => { e.stopPropagation(); startRename(k, name); });
        li.append(name, edit,
          Object.assign(document.createElement("span"), { className: "cg-region-share", textContent: `${share}${fmt(sizes[k])} cells` }));
        if (T && P > 1) li.appendChild(sparkline(k, shares));
        li.addEventListener("click", () => { flyToRegion(k); });
        ol.appendChild(li);
      }
      $("cg-regions-box").hidden = false;
    }

    function drawWords(x0, x1, y0, y1, searching, faded) {
      const step = Math.max(1, Math.ceil(LABEL_CELL / view.s));
      ctx.textAlign = "center";
      ctx.textBaseline = "top";
      const best = new Map();
      const starts = (lo, hi, E) => {   // [world start, length] of the blocks meeting [lo, hi)
        const out = [];
        for (let p = Math.floor(lo / E) * E; p < hi; p += E) {
          for (let a = 0; a < E; a += step) {
            const len = Math.min(step, E - a);
            if (p + a + len > lo && p + a < hi) out.push([p + a, len]);
          }
        }
        return out;
      };
      const rows = starts(y0, y1, E1), cols = starts(x0, x1, E2);
      for (const [y, h] of rows) {
        for (const [x, w] of cols) {
          let words, lit;
          if (step === 1) {
            const i = mod(y, E1) * E2 + mod(x, E2);
            words = [];
            for (let j = 0; j < K; j++) words.push([D.top_words[i * K + j], score(i * K + j), D.top_weights[i * K + j], wordLayer ? wordLayer[i * K + j] : -1]);
            lit = !searching || state.highlight[i];
          } else {
            best.clear();
            lit = !searching;
            for (let a = 0; a < h; a++) {
              for (let b = 0; b < w; b++) {
                const i = mod(y + a, E1) * E2 + mod(x + b, E2);
                if (searching && state.highlight[i]) lit = true;
                for (let j = 0; j < K; j++) {
                  const sc = score(i * K + j), v = D.top_words[i * K + j], had = best.get(v);
                  if (had === undefined || sc > had[0]) best.set(v, [sc, D.top_weights[i * K + j], wordLayer ? wordLayer[i * K + j] : -1]);
                }
              }
            }
            // the block's best words by their best score (ranking), sized by that cell's pi
            words = Array.from(best.entries()).map(([v, [sc, wt, ly]]) => [v, sc, wt, ly])
              .sort((p, q) => q[1] - p[1] || p[0] - q[0]).slice(0, K);
          }
          drawCellWords((x - view.ox) * view.s, (y - view.oy) * view.s, w * view.s, h * view.s,
            step * view.s, words, !lit || faded);
        }
      }
    }

    // words of one cell or block (width bw, height bh; fonts sized for a block of size s)
    function drawCellWords(px, py, bw, bh, s, words, dim) {
      const pad = Math.max(1, s * 0.06), availW = bw - 2 * pad, availH = bh - 2 * pad;
      const lines = [];
      let height = 0;
      for (let j = 0; j < words.length; j++) {
        const w = words[j][2];
        if (!(w > 0)) break;
        const word = vocab[words[j][0]];
        const hit = state.terms.has(word);
        let size = Math.min(44, s * (0.13 + 0.25 * Math.sqrt(w / wmax)));
        if (size < MIN_FONT) continue;     // sizes follow pi, not the ranking
        const width = textWidth(word, size, hit);
        if (width > availW) size *= availW / width;
        if (size < MIN_FONT) continue;
        if (height + size * 1.12 > availH) break;
        lines.push([word, size, hit, words[j][3]]);
        height += size * 1.12;
      }
      let ty = py + pad + (availH - height) / 2;
      for (let j = 0; j < lines.length; j++) {
        const [word, size, hit, layer] = lines[j];
        ctx.font = `${hit ? 700 : 500} ${size.toFixed(1)}px ${FONT}`;
        ctx.fillStyle = hit ? "#9a3412" : dim ? "rgba(31, 35, 40, 0.35)" : layer >= 0 ? layerCSS[layer]
          : j === 0 ? "#1f2328" : "#3b4250";
        ctx.fillText(word, px + bw / 2, ty + size * 0.06);
        ty += size * 1.12;
      }
    }

    // ---- the view in the URL fragment (docs/map.md, "Sharing a view"): centre (x, y in
    // cells), zoom (z, relative to the fitted view), pinned cell, search and colouring; a
    // copied link reopens the same view.  A fragment comes from anyone: every field is
    // checked and an unknown or malformed one is ignored.
    function viewState() {
      const p = new URLSearchParams();
      p.set("x", (view.ox + cw / 2 / view.s).toFixed(3));
      p.set("y", (view.oy + ch / 2 / view.s).toFixed(3));
      p.set("z", (view.s / view.fit).toFixed(4));
      if (state.pinned >= 0) p.set("pin", `${Math.floor(state.pinned / E2)},${state.pinned % E2}`);
      if (state.selRect) p.set("s", state.selRect.join(","));
      if (state.query.trim()) p.set("q", state.query.trim());
      if (state.query.trim() && mode.value === "documents") p.set("m", "documents");
      if (state.colouring && state.colouring.kind !== "time") p.set("c", state.colouring.base || state.colouring.name);
      if (time.on) p.set("t", `${time.p0}-${time.p1}`);
      if (filters.size) {
        p.set("f", [...filters].map(([k, f]) => `${k}:` + (f instanceof Set ? [...f].join(".") : `${f[0] === -Infinity ? "" : f[0]}~${f[1] === Infinity ? "" : f[1]}`)).join("_"));
      }
      return "#" + p.toString();
    }
    function applyViewState(hash) {
      const p = new URLSearchParams(String(hash).replace(/^#/, "").slice(0, 4000));
      const num = (k) => { const v = Number(p.get(k)); return p.has(k) && Number.isFinite(v) ? v : null; };
      const c = p.get("c");
      if (c !== null && D.colorings.some((col) => col.name === c)) colorBy(c);
      const q = p.get("q");
      if (docsIn && q !== null) {
        input.value = q.slice(0, 500);
        if (p.get("m") === "documents" && N) { mode.value = "documents"; searchDocuments(input.value); } else search(input.value);
      }
      for (const part of (docsIn ? p.get("f") || "" : "").split("_").slice(0, 64)) {
        const m = /^(\d{1,4}):(?:((?:\d{1,4}(?:\.\d{1,4})*)?)|(-?[\d.eE+-]{0,40})~(-?[\d.eE+-]{0,40}))$/.exec(part);
        if (!m || Number(m[1]) >= FILTERABLE.length) continue;
        const col = FILTERABLE[Number(m[1])];
        if (col.kind === "categorical" && m[3] === undefined) setFilter(col.name, (m[2] ? m[2].split(".") : []).map((c) => col.levels[Number(c)]).filter((v) => v !== undefined));
        else if (col.kind === "continuous" && m[3] !== undefined) setFilter(col.name, [m[3], m[4]]);
      }
      const range = /^(\d{1,6})-(\d{1,6})$/.exec(p.get("t") || "");
      if (docsIn && range && T) setTime(Number(range[1]), Number(range[2]));
      const pinned = /^(-?\d{1,9}),(-?\d{1,9})$/.exec(docsIn ? p.get("pin") || "" : "");
      if (pinned) pin(Number(pinned[1]), Number(pinned[2]));
      const rect = /^(-?\d{1,6}),(-?\d{1,6}),(-?\d{1,6}),(-?\d{1,6})$/.exec(p.get("s") || "");
      if (docsIn && rect && !pinned) {
        const [r0, c0, r1, c1] = rect.slice(1).map(Number);
        if (r1 >= r0 && c1 >= c0) selectRect(r0, c0, r1, c1);
      }
      const z = num("z"), x = num("x"), y = num("y");
      if (z !== null && z > 0) view.s = Math.max(view.fit * 0.5, Math.min(Math.max(view.fit * 24, 60), z * view.fit));
      // the torus repeats: any centre is one within the first period
      if (x !== null) view.ox = mod(x, E2) - cw / 2 / view.s;
      if (y !== null) view.oy = mod(y, E1) - ch / 2 / view.s;
      draw();
      return viewState();
    }
    let hashTimer = null;
    // only a page of its own has an address to share (not a map in a notebook's frame)
    const OWN_PAGE = window.self === window.top && location.protocol !== "about:";
    function rememberView() {       // the fragment follows the view, a moment after it settles
      if (!OWN_PAGE) return;
      clearTimeout(hashTimer);
      hashTimer = setTimeout(() => {
        try { history.replaceState(null, "", viewState()); } catch (err) { /* e.g. a srcdoc frame */ }
      }, 250);
    }

    let pending = false;
    function scheduleDraw() {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => { pending = false; draw(); });
    }

    // ---- search: cell i lights for word w when pi_i(w) >= search_fraction * max_j pi_j(w)
    function search(query) {
      state.query = String(query);
      const terms = state.query.split(/[\s,;]+/).filter((t) => t.length);
      const info = $("cg-search-info");
      state.terms = new Set();
      if (!terms.length) {
        state.highlight = null; state.highlightList = []; info.textContent = "";
        draw();
        return [];
      }
      const hl = new Uint8Array(L), missing = [];
      for (const t of terms) {
        let j = wordIndex.get(t);
        if (j === undefined) j = lowerIndex.get(t.toLowerCase());
        if (j === undefined) { missing.push(t); continue; }
        state.terms.add(vocab[j]);
        for (let e = D.search_offsets[j]; e < D.search_offsets[j + 1]; e++) hl[D.search_cells[e]] = 1;
      }
      const list = [];
      for (let i = 0; i < L; i++) if (hl[i]) list.push(i);
      state.highlight = state.terms.size ? hl : null;
      state.highlightList = list;
      let msg = state.terms.size ? `${list.length} cell${list.length === 1 ? "" : "s"}` : "";
      if (missing.length) msg += (msg ? " · " : "") + `not in the vocabulary: ${missing.join(", ")}`;
      info.textContent = msg;
      draw();
      return list;
    }

    // ---- document search (docs/map.md, "Search"): the titles and snippets, tokenised into
    // lower-case runs of letters and digits, in an
    // inverted index built on the first search; a document matches when it holds every
    // term (the last one also as a prefix, for typing); titles first, then by index.  The
    // cells lit are the centres of the matches' most probable windows.
    let docIndex = null;
    const tokens = (text) => String(text).toLowerCase().match(/[\p{L}\p{N}]+/gu) || [];
    function buildDocIndex() {
      const index = new Map();
      for (let t = 0; t < N; t++) {
        const seen = new Set(tokens(D.titles[t]).concat(tokens(D.snippets[t] || "")));
        for (const w of seen) { let a = index.get(w); if (!a) index.set(w, a = []); a.push(t); }
      }
      return index;
    }
    function searchDocuments(query) {
      const terms = tokens(query).slice(0, 20);
      state.query = String(query);
      state.docResults = [];
      if (!terms.length || !N) { state.highlight = null; state.highlightList = []; $("cg-search-info").textContent = ""; draw(); return []; }
      if (!docIndex) docIndex = buildDocIndex();
      const last = terms[terms.length - 1];
      let hits = null;
      terms.forEach((term, j) => {
        let set;
        if (j === terms.length - 1) {
          set = new Set();
          for (const [w, docs] of docIndex) if (w.startsWith(last)) for (const t of docs) set.add(t);
        } else set = new Set(docIndex.get(term) || []);
        hits = hits === null ? set : new Set([...hits].filter((t) => set.has(t)));
      });
      const inTitle = (t) => { const tt = tokens(D.titles[t]); return terms.filter((w, j) => tt.some((x) => (j === terms.length - 1 ? x.startsWith(w) : x === w))).length; };
      const list = [...hits].filter(shown).map((t) => [t, inTitle(t)]).sort((a, b) => b[1] - a[1] || a[0] - b[0]).map((p) => p[0]);
      state.docResults = list;
      const hl = new Uint8Array(L);
      for (const t of list) hl[windowCentre(t)] = 1;
      state.terms = new Set();
      state.highlight = list.length ? hl : null;
      state.highlightList = [];
      for (let i = 0; i < L; i++) if (hl[i]) state.highlightList.push(i);
      $("cg-search-info").textContent = `${fmt(list.length)} document${list.length === 1 ? "" : "s"}`;
      renderDocResults(list);
      draw();
      return list.map((t) => D.doc_index[t]);
    }
    // cells lit from outside the page (the widget's w.highlight): as a search's hits, with
    // the words in bold; an empty list clears them
    function highlight(cells, terms) {
      const hl = new Uint8Array(L), list = [];
      for (const v of Array.from(cells || []).slice(0, L)) { const i = Math.floor(Number(v)); if (i >= 0 && i < L && !hl[i]) { hl[i] = 1; list.push(i); } }
      list.sort((a, b) => a - b);
      state.terms = new Set(Array.from(terms || []).filter((w) => wordIndex.has(w)));
      state.highlight = list.length ? hl : null;
      state.highlightList = list;
      state.query = "";
      input.value = "";
      $("cg-search-info").textContent = list.length ? `${fmt(list.length)} cell${list.length === 1 ? "" : "s"} highlighted` : "";
      draw();
      return list.slice();
    }
    function windowCentre(t) {
      const k = D.doc_map[t], r = Math.floor(k / E2), c = k % E2;
      return mod(r + Math.floor(W1 / 2), E1) * E2 + mod(c + Math.floor(W2 / 2), E2);
    }
    function renderDocResults(list) {
      const ol = $("cg-docs");
      ol.textContent = "";
      const shown = list.slice(0, D.list_length);
      $("cg-panel-info").textContent = `${fmt(list.length)} document${list.length === 1 ? "" : "s"} match "${state.query.trim()}"` +
        (shown.length < list.length ? `; the first ${shown.length} are listed` : "") + " (titles first); click one to go to its place on the map.";
      const frag = document.createDocumentFragment();
      for (const t of shown) {
        const li = document.createElement("li");
        li.dataset.doc = String(t);
        const i = windowCentre(t), r = Math.floor(i / E2), c = i % E2;
        li.append(Object.assign(document.createElement("div"), { className: "cg-doc-title", textContent: D.titles[t] }),
          Object.assign(document.createElement("div"), { className: "cg-doc-meta", textContent: `cell (${r}, ${c}) · id ${D.ids[t]}` }));
        if (D.snippets[t]) li.appendChild(Object.assign(document.createElement("div"), { className: "cg-snippet", textContent: D.snippets[t] }));
        li.addEventListener("click", () => {
          view.ox = c + 0.5 - cw / 2 / view.s; view.oy = r + 0.5 - ch / 2 / view.s;
          state.hoverDoc = t; draw();
        });
        frag.appendChild(li);
      }
      ol.appendChild(frag);
    }

    // ---- documents of a pinned cell (docs/map.md, "Pin a cell"): c_t(cell) = sum of
    // q_t(k) K(cell - k) over the stored corners k whose window covers the cell, K the depth
    // of the cell in the window (rank_depth: 1 at the centre), summed in stored order and
    // float64; listed by c rounded to rank_decimals, then by the document's log-likelihood
    // per token in its MAP window (doc_loglik), then by index: countgrid.maps.rank_documents
    const RANK_SCALE = Math.pow(10, D.rank_decimals);
    const loglik = (t) => { const v = D.doc_loglik[t]; return Number.isNaN(v) ? -Infinity : v; };
    let covered = 0;
    function rank(cell) {
      const r = Math.floor(cell / E2), c = cell % E2;
      const depth = new Float64Array(L);
      for (let a = 0; a < W1; a++) for (let b = 0; b < W2; b++) depth[mod(r - a, E1) * E2 + mod(c - b, E2)] = D.rank_depth[a * W2 + b];
      const off = D.doc_offsets, pos = D.doc_positions, q = D.doc_posteriors;
      const scores = new Float64Array(N), keys = new Float64Array(N), cand = [];
      for (let t = 0; t < N; t++) {
        if (!shown(t)) continue;
        let sc = 0;
        for (let j = off[t]; j < off[t + 1]; j++) { const d = depth[pos[j]]; if (d > 0) sc += q[j] * d; }
        scores[t] = sc;
        keys[t] = Math.floor(sc * RANK_SCALE + 0.5);
        if (sc > 0) cand.push(t);
      }
      covered = cand.length;
      cand.sort((a, b) => keys[b] - keys[a] || loglik(b) - loglik(a) || a - b);
      const top = cand.slice(0, D.list_length);
      return [top, top.map((t) => scores[t])];
    }

    function pin(r, c) {
      r = mod(Math.floor(r), E1); c = mod(Math.floor(c), E2);
      state.selection = null; state.selRect = null;
      state.pinned = r * E2 + c;
      const [list, scores] = N ? rank(state.pinned) : [[], []];
      state.listed = list; state.scores = scores; state.hoverDoc = -1;
      renderList(r, c);
      showNote();
      draw();
      tellSelection("cell", state.pinned);
      return list.map((t) => D.doc_index[t]);
    }

    function renderList(r, c) {
      const ol = $("cg-docs");
      ol.textContent = "";
      const words = [];
      for (let j = 0; j < Math.min(K, 5); j++) if (D.top_weights[state.pinned * K + j] > 0) words.push(vocab[D.top_words[state.pinned * K + j]]);
      $("cg-panel-info").textContent = !N ? `Cell (${r}, ${c}): ${words.join(", ")}. This map has no documents.`
        : `Cell (${r}, ${c}): ${words.join(", ")} — ${fmt(covered)} document${covered === 1 ? "" : "s"}${time.on ? " of " + rangeName(time.p0, time.p1) : ""} cover it` +
          (state.listed.length < covered ? `; the ${state.listed.length} most central are listed` : "") +
          " (score: how central the cell is in the document's window, 100 % = at its centre for sure).";
      $("cg-csv").disabled = !state.listed.length;
      const best = state.scores.length ? state.scores[0] : 1;
      const frag = document.createDocumentFragment();
      state.listed.forEach((t, rankNo) => {
        const li = document.createElement("li");
        li.dataset.doc = String(t);
        const title = document.createElement("div");
        title.className = "cg-doc-title";
        const link = D.links ? safeHref(D.links[t]) : "";
        let a = null;
        if (link) {
          a = document.createElement("a");
          a.href = link;
          // what the browser resolved: http(s), or a relative link on this page's scheme
          if (!["http:", "https:", location.protocol].includes(a.protocol)) a = null;
        }
        if (a) {
          a.target = "_blank"; a.rel = "noopener noreferrer"; a.textContent = D.titles[t];
          title.appendChild(a);
        } else title.textContent = D.titles[t];
        const meta = document.createElement("div");
        meta.className = "cg-doc-meta";
        const bar = document.createElement("span");
        bar.className = "cg-score";
        bar.style.width = Math.max(2, 48 * state.scores[rankNo] / best) + "px";
        const span = (text) => Object.assign(document.createElement("span"), { textContent: text });
        meta.append(span(`#${rankNo + 1}`), bar, span(`${(100 * state.scores[rankNo]).toFixed(1)} %`),
          span(`id ${D.ids[t]}`));
        li.append(title, meta);
        if (D.snippets[t]) {
          const sn = document.createElement("div");
          sn.className = "cg-snippet"; sn.textContent = D.snippets[t];
          li.appendChild(sn);
        }
        li.addEventListener("mouseenter", () => { state.hoverDoc = t; li.classList.add("cg-active"); scheduleDraw(); });
        li.addEventListener("mouseleave", () => { state.hoverDoc = -1; li.classList.remove("cg-active"); scheduleDraw(); });
        frag.appendChild(li);
      });
      ol.appendChild(frag);
      ol.scrollTop = 0;
    }

    // ---- colourings
    const select = $("cg-color");
    D.colorings.forEach((col, k) => {
      const o = document.createElement("option");
      o.value = String(k); o.textContent = col.name;
      select.appendChild(o);
    });
    function colorBy(name) {
      // a colouring ends the time view: the lists hold every date again
      if (time.on) { endTime(); if (docsIn) refreshLists(); }
      markRegionDifferences(null);
      const k = D.colorings.findIndex((c) => c.name === name);
      const legend = $("cg-legend");
      if (k < 0) {
        state.colouring = null; state.cellRGB = null; state.cellCSS = null;
        select.value = ""; legend.hidden = true;
        draw();
        return false;
      }
      const col = D.colorings[k];
      state.colouring = col;
      state.cellRGB = colouringRGB(col, L);
      state.cellCSS = state.cellRGB.map(css);
      select.value = String(k);
      legend.textContent = "";
      const head = document.createElement("div");
      head.className = "cg-legend-title"; head.textContent = col.name;
      head.title = "Click to fold or unfold the legend";
      head.addEventListener("click", () => legend.classList.toggle("cg-folded"));
      legend.appendChild(head);
      if (col.kind === "categorical") {
        // many short levels: several columns (the legend grows to the left; it scrolls if
        // the map is too small for it); long level names keep one column of 280 pixels
        const rows = document.createElement("div");
        const longest = Math.max(...col.levels.map((lev) => lev.length));
        const ncol = longest > 26 ? 1 : col.levels.length > 36 ? 3 : col.levels.length > 14 ? 2 : 1;
        rows.className = "cg-legend-rows cg-cols-" + ncol;
        legend.classList.toggle("cg-wide", ncol > 1);
        col.levels.forEach((lev, c) => {
          const row = document.createElement("div");
          row.className = "cg-legend-row";
          const sw = document.createElement("span");
          sw.className = "cg-swatch"; sw.style.background = css(levelColor(col, c));
          row.append(sw, lev + (col.counts ? ` (${fmt(col.counts[c])})` : ""));
          rows.appendChild(row);
        });
        legend.appendChild(rows);
        if (col.mass && N) legend.appendChild(compareControls(col));
      } else {
        legend.classList.remove("cg-wide");
        const bar = document.createElement("div");
        bar.className = "cg-bar";
        bar.style.background = "linear-gradient(to right," + RAMP.map((c) => css(mix(WHITE, c, 0.6))).join(",") + ")";
        const labels = document.createElement("div");
        labels.className = "cg-bar-labels";
        const f = (v) => (Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-2 && v !== 0) ? v.toExponential(2) : +v.toPrecision(3)).toString();
        labels.append(Object.assign(document.createElement("span"), { textContent: f(col.vmin) }),
          Object.assign(document.createElement("span"), { textContent: f(col.vmax) }));
        legend.append(bar, labels);
      }
      legend.hidden = false;
      draw();
      return true;
    }
    // ---- where two groups differ (docs/map.md, "Compare groups"): per cell the log-odds
    // ratio of the groups' document mass with an informative Dirichlet prior and its
    // standard error, as countgrid.grid.compare_groups (prior weight: the number of
    // cells; 95 % intervals); cells whose interval excludes 0 are outlined.
    const Z95 = 1.959963984540054;
    function compareLevels(name, a, b) {
      const col = D.colorings.find((c) => c.name === name && c.kind === "categorical" && c.mass);
      if (!col) return null;
      const C = col.levels.length, ia = col.levels.indexOf(a), ib = b === null || b === undefined ? -1 : col.levels.indexOf(b);
      if (ia < 0 || (b !== null && b !== undefined && (ib < 0 || ib === ia))) return null;
      const P = col.values, M = col.mass;
      let na = col.counts[ia], nb = 0;
      if (ib < 0) { for (let c = 0; c < C; c++) if (c !== ia) nb += col.counts[c]; } else nb = col.counts[ib];
      if (!(na > 0 && nb > 0)) return null;
      const ya = new Float64Array(L), yb = new Float64Array(L), delta = new Float64Array(L), std = new Float64Array(L);
      let pooledSum = 0;
      for (let i = 0; i < L; i++) {
        ya[i] = P[i * C + ia] * M[i];
        yb[i] = ib < 0 ? M[i] - ya[i] : P[i * C + ib] * M[i];
        if (yb[i] < 0) yb[i] = 0;
        pooledSum += (ya[i] + yb[i]) / (na + nb);
      }
      const alpha0 = L, marked = new Uint8Array(L);
      let vmax = 0, nMarked = 0;
      for (let i = 0; i < L; i++) {
        const al = pooledSum > 0 ? alpha0 * ((ya[i] + yb[i]) / (na + nb)) / pooledSum : alpha0 / L;
        delta[i] = Math.log(ya[i] + al) - Math.log(na + alpha0 - ya[i] - al) - Math.log(yb[i] + al) + Math.log(nb + alpha0 - yb[i] - al);
        std[i] = Math.sqrt(1 / (ya[i] + al) + 1 / (yb[i] + al));
        if (delta[i] - Z95 * std[i] > 0 || delta[i] + Z95 * std[i] < 0) { marked[i] = 1; nMarked++; }
        vmax = Math.max(vmax, Math.abs(delta[i]));
      }
      // the same by region (the listed level; prior weight: the number of regions), as
      // compare_groups(..., labels=): a region sums its cells' masses
      let regions = null;
      if (LEVELS.length) {
        const lev = LEVELS[0], R = lev.n_regions;
        const ra = new Float64Array(R), rb = new Float64Array(R);
        for (let i = 0; i < L; i++) { ra[lev.labels[i]] += ya[i]; rb[lev.labels[i]] += yb[i]; }
        let sumP = 0;
        for (let r = 0; r < R; r++) sumP += (ra[r] + rb[r]) / (na + nb);
        regions = { delta: new Float64Array(R), std: new Float64Array(R), marked: new Uint8Array(R) };
        for (let r = 0; r < R; r++) {
          const al = sumP > 0 ? R * ((ra[r] + rb[r]) / (na + nb)) / sumP : 1;
          const d = Math.log(ra[r] + al) - Math.log(na + R - ra[r] - al) - Math.log(rb[r] + al) + Math.log(nb + R - rb[r] - al);
          const sd = Math.sqrt(1 / (ra[r] + al) + 1 / (rb[r] + al));
          regions.delta[r] = d; regions.std[r] = sd;
          regions.marked[r] = d - Z95 * sd > 0 || d + Z95 * sd < 0 ? 1 : 0;
        }
      }
      return { name: `${name}: ${a} vs ${ib < 0 ? "the rest" : b}`, base: name, kind: "difference", a, b: ib < 0 ? null : b,
        values: delta, std, marked, nMarked, vmax: vmax > 0 ? vmax : 1, regions,
        colorA: levelColor(col, ia), colorB: ib < 0 ? [90, 90, 90] : levelColor(col, ib) };
    }
    // a legend of a colour bar: its title (a click folds it), the bar's CSS gradient, the
    // labels of its two ends, a note and any further elements (e.g. a button)
    function barLegend(title, gradient, left, right, note, ...extra) {
      const legend = $("cg-legend");
      legend.textContent = "";
      legend.classList.remove("cg-wide");
      const head = Object.assign(document.createElement("div"), { className: "cg-legend-title", textContent: title });
      head.addEventListener("click", () => legend.classList.toggle("cg-folded"));
      const bar = Object.assign(document.createElement("div"), { className: "cg-bar" });
      bar.style.background = gradient;
      const labels = Object.assign(document.createElement("div"), { className: "cg-bar-labels" });
      labels.append(Object.assign(document.createElement("span"), { textContent: left }),
        Object.assign(document.createElement("span"), { textContent: right }));
      legend.append(head, bar, labels, Object.assign(document.createElement("div"), { className: "cg-muted", textContent: note }), ...extra);
      legend.hidden = false;
    }
    function showDifference(name, a, b) {
      const diff = compareLevels(name, a, b);
      if (!diff) return null;
      state.colouring = diff;
      state.cellRGB = colouringRGB(diff, L);
      state.cellCSS = state.cellRGB.map(css);
      const back = Object.assign(document.createElement("button"), { type: "button", textContent: "back to " + diff.base });
      back.addEventListener("click", () => colorBy(diff.base));
      barLegend(diff.name, `linear-gradient(to right,${css(mix(WHITE, diff.colorB, 0.7))},#fff,${css(mix(WHITE, diff.colorA, 0.7))})`,
        `${diff.b === null ? "the rest" : diff.b} ${(-diff.vmax).toFixed(2)}`, `${diff.vmax.toFixed(2)} ${diff.a}`,
        `log-odds of document mass; ${fmt(diff.nMarked)} outlined cell${diff.nMarked === 1 ? "" : "s"}: 95 % interval excludes 0` +
          (diff.regions ? `; ${diff.regions.marked.reduce((n, v) => n + v, 0)} of ${diff.regions.marked.length} regions differ (bold in the region list)` : ""), back);
      markRegionDifferences(diff);
      draw();
      return { delta: Array.from(diff.values), std: Array.from(diff.std), marked: Array.from(diff.marked) };
    }
    // the region list during a comparison: each region's log-odds and interval; the
    // regions whose interval excludes 0 in the colour of the group over-represented there
    function markRegionDifferences(diff) {
      for (const li of document.querySelectorAll("#cg-regions li")) {
        const old = li.querySelector(".cg-region-diff");
        if (old) old.remove();
        if (!diff || !diff.regions) continue;
        const k = Number(li.dataset.region), d = diff.regions.delta[k], sd = diff.regions.std[k];
        const span = Object.assign(document.createElement("span"), { className: "cg-region-diff",
          textContent: `${d >= 0 ? "+" : ""}${d.toFixed(2)} ± ${(Z95 * sd).toFixed(2)}`,
          title: `log-odds of ${diff.a} against ${diff.b === null ? "the rest" : diff.b} in this region; 95 % interval` });
        if (diff.regions.marked[k]) { span.style.color = css(mix([0, 0, 0], d >= 0 ? diff.colorA : diff.colorB, 0.8)); span.style.fontWeight = "700"; }
        li.appendChild(span);
      }
    }
    function compareControls(col) {
      const box = document.createElement("div");
      box.className = "cg-compare";
      const pick = (withRest) => {
        const sel = document.createElement("select");
        if (withRest) sel.appendChild(Object.assign(document.createElement("option"), { value: "", textContent: "the rest" }));
        col.levels.forEach((lev) => sel.appendChild(Object.assign(document.createElement("option"), { value: lev, textContent: lev })));
        return sel;
      };
      const sa = pick(false), sb = pick(true);
      const go = Object.assign(document.createElement("button"), { type: "button", textContent: "Compare" });
      go.addEventListener("click", () => showDifference(col.name, sa.value, sb.value === "" ? null : sb.value));
      box.append(Object.assign(document.createElement("span"), { textContent: "Where" }), sa,
        Object.assign(document.createElement("span"), { textContent: "differs from" }), sb, go);
      return box;
    }
    select.addEventListener("change", () => {
      const name = select.value === "" ? null : D.colorings[+select.value].name;
      colorBy(name);
      toHost({ type: "countgrid:color", name: name === null ? "" : name });
    });

    // ---- time (docs/map.md, "Time"): a range of periods of the date column; the map shows
    // where its documents sit (each cell's share of their mass, as
    // countgrid.grid.shares_by_period's density), the document lists keep its documents,
    // and each region's sparkline marks it.  A one-period range plays through the periods.
    // the filters (below) and the time range together decide the documents kept
    const FILTERABLE = D.colorings.filter((c) => c.per_document &&
      (c.kind === "categorical" || c.kind === "continuous"));
    const filters = new Map();      // index into FILTERABLE -> Set of levels | [lo, hi]
    const T = D.time || null, P = T ? T.labels.length : 0;
    const time = { on: false, p0: 0, p1: Math.max(0, P - 1), timer: null };
    // a time-sliced grid (docs/map.md, "Time-sliced grids"): the slider on one period
    // shows the words of that period's grid; a range of periods, or all dates, the words
    // of the periods' average
    const periodWords = T && T.grids ? { base: [D.top_words, D.top_scores, D.top_weights], shown: -1 } : null;
    function showPeriodWords(p) {
      if (!periodWords) return;
      const g = p >= 0 ? T.grids[p] : -1;
      if (g === periodWords.shown) return;
      periodWords.shown = g;
      if (g < 0) [D.top_words, D.top_scores, D.top_weights] = periodWords.base;
      else {
        const n = L * K, cut = (a) => a.subarray(g * n, (g + 1) * n);
        [D.top_words, D.top_scores, D.top_weights] = [cut(T.top_words), cut(T.top_scores), cut(T.top_weights)];
      }
    }
    const fromInput = $("cg-time-from"), toInput = $("cg-time-to"), play = $("cg-time-play");
    function timeDensity(p0, p1) {
      const out = new Float64Array(L);
      let n = 0;
      for (let p = p0; p <= p1; p++) {
        n += T.counts[p];
        for (let i = 0; i < L; i++) out[i] += T.mass[p * L + i];
      }
      if (n > 0) for (let i = 0; i < L; i++) out[i] /= n;
      return [out, n];
    }
    const rangeName = (p0, p1) => (p0 === p1 ? T.labels[p0] : `${T.labels[p0]} – ${T.labels[p1]}`);
    function setTime(p0, p1) {
      if (!T || !P) return null;
      p0 = Math.max(0, Math.min(P - 1, Math.floor(Number(p0)) || 0));
      p1 = Math.max(0, Math.min(P - 1, Math.floor(Number(p1)) || 0));
      if (p1 < p0) [p0, p1] = [p1, p0];
      const [density, n] = timeDensity(p0, p1);
      let vmax = 0;
      for (let i = 0; i < L; i++) vmax = Math.max(vmax, density[i]);
      Object.assign(time, { on: true, p0, p1 });
      showPeriodWords(p0 === p1 ? p0 : -1);
      const range = rangeName(p0, p1);
      const col = { name: `${T.name}: ${range}`, kind: "time", values: density, vmax: vmax > 0 ? vmax : 1, range };
      state.colouring = col;
      state.cellRGB = colouringRGB(col, L);
      state.cellCSS = state.cellRGB.map(css);
      select.value = "";
      updateFilter();
      fromInput.value = String(p0); toInput.value = String(p1);
      $("cg-time-info").textContent = `${range} · ${fmt(n)} document${n === 1 ? "" : "s"}`;
      barLegend(col.name, "linear-gradient(to right," + [0, 0.25, 0.5, 0.75, 1].map((x) => css(mix(WHITE, rampColor(x), 0.12 + 0.6 * x))).join(",") + ")",
        "0", `${(100 * col.vmax).toPrecision(2)} %`, `each cell's share of the ${fmt(n)} documents of the period`);
      markSparklines();
      refreshLists();
      draw();
      return Array.from(density);
    }
    function endTime() {
      stopPlay();
      time.on = false;
      showPeriodWords(-1);
      updateFilter();
      state.colouring = null; state.cellRGB = null; state.cellCSS = null;
      $("cg-legend").hidden = true;
      if (T) {
        fromInput.value = "0"; toInput.value = String(P - 1);
        $("cg-time-info").textContent = `all ${fmt(P)} ${T.period}s · ${fmt(N)} documents` +
          (T.n_undated ? ` (${fmt(T.n_undated)} without a date)` : "");
      }
      markSparklines();
    }
    // "All dates": the time view ends and the lists hold every document again
    function allDates() { endTime(); refreshLists(); draw(); return null; }
    // the lists follow the documents kept: the pinned cell's, the selection's, the search's
    function refreshLists() {
      if (state.pinned >= 0) pin(Math.floor(state.pinned / E2), state.pinned % E2);
      else if (state.docResults.length || (mode.value === "documents" && state.query.trim())) searchDocuments(state.query);
    }
    function stopPlay() {
      if (time.timer !== null) { clearInterval(time.timer); time.timer = null; }
      play.innerHTML = "&#9654;"; play.setAttribute("aria-label", "Play");
    }
    function startPlay() {
      let p = time.on && time.p0 === time.p1 && time.p0 < P - 1 ? time.p0 + 1 : 0;
      setTime(p, p);
      play.innerHTML = "&#10074;&#10074;"; play.setAttribute("aria-label", "Pause");
      time.timer = setInterval(() => {
        p += 1;
        if (p >= P) { stopPlay(); return; }
        setTime(p, p);
      }, 900);
    }
    // a region's share of each period's documents (the sum of the density over its cells)
    function regionShares(lev) {
      const out = [];
      for (let p = 0; p < P; p++) {
        const row = new Float64Array(lev.n_regions);
        if (T.counts[p] > 0) for (let i = 0; i < L; i++) row[lev.labels[i]] += T.mass[p * L + i] / T.counts[p];
        out.push(row);
      }
      return out;
    }
    const sparks = [];
    function sparkline(k, shares) {
      const c = Object.assign(document.createElement("canvas"), { className: "cg-spark", width: 128, height: 32 });
      c.title = "share of each " + T.period + "'s documents: " + shares.map((row, p) => `${T.labels[p]} ${(100 * row[k]).toFixed(1)} %`).join(", ");
      sparks.push([c, k, shares]);
      return c;
    }
    function markSparklines() {
      for (const [c, k, shares] of sparks) {
        const g = c.getContext("2d"), w = c.width, h = c.height;
        g.clearRect(0, 0, w, h);
        let top = 0;
        for (const row of shares) top = Math.max(top, row[k]);
        const x = (p) => (P === 1 ? w / 2 : (p / (P - 1)) * (w - 4) + 2);
        if (time.on) {
          g.fillStyle = "rgba(37, 99, 235, 0.16)";
          g.fillRect(x(time.p0) - 2, 0, x(time.p1) - x(time.p0) + 4, h);
        }
        g.strokeStyle = "#374151"; g.lineWidth = 2;
        g.beginPath();
        shares.forEach((row, p) => { const y = h - 3 - (top > 0 ? row[k] / top : 0) * (h - 6); if (p) g.lineTo(x(p), y); else g.moveTo(x(p), y); });
        g.stroke();
      }
    }
    if (T && P) {
      $("cg-time-name").textContent = T.name;
      fromInput.max = toInput.max = String(P - 1);
      fromInput.addEventListener("input", () => { stopPlay(); setTime(+fromInput.value, Math.max(+fromInput.value, +toInput.value)); });
      toInput.addEventListener("input", () => { stopPlay(); setTime(Math.min(+fromInput.value, +toInput.value), +toInput.value); });
      play.addEventListener("click", () => (time.timer === null ? startPlay() : stopPlay()));
      $("cg-time-all").addEventListener("click", allDates);
      endTime();
      $("cg-time").hidden = false;
    }

    // ---- filters (docs/map.md, "Filters"): tick levels of a categorical column, or a range
    // of a numeric one; the lists keep the documents that pass every filter (and the time
    // range), searches included, and each cell fades by the share of its documents' mass
    // kept, relative to the cell that keeps the most (over the stored posteriors).
    function passes(t) {
      for (const [k, f] of filters) {
        const col = FILTERABLE[k];
        if (f instanceof Set) { if (!f.has(col.doc_levels[t])) return false; }
        else { const v = col.doc_values[t]; if (!(v >= f[0] && v <= f[1])) return false; }
      }
      return true;
    }
    function keptShare(keep) {
      const kc = new Float64Array(L), ac = new Float64Array(L);
      const off = D.doc_offsets, pos = D.doc_positions, q = D.doc_posteriors;
      for (let t = 0; t < N; t++) {
        for (let j = off[t]; j < off[t + 1]; j++) { ac[pos[j]] += q[j]; if (keep[t]) kc[pos[j]] += q[j]; }
      }
      const kept = new Float64Array(L), all = new Float64Array(L);
      for (let k = 0; k < L; k++) {
        if (!(ac[k] > 0)) continue;
        const r = Math.floor(k / E2), c = k % E2;
        for (let a = 0; a < W1; a++) for (let b = 0; b < W2; b++) {
          const i = mod(r + a, E1) * E2 + mod(c + b, E2);
          kept[i] += kc[k]; all[i] += ac[k];
        }
      }
      const share = new Float64Array(L);
      for (let i = 0; i < L; i++) share[i] = all[i] > 0 ? kept[i] / all[i] : 0;
      return share;
    }
    function updateFilter() {
      const info = $("cg-filter-info");
      if (!time.on && !filters.size) {
        state.docFilter = null; state.dim = null;
        if (info) info.textContent = "";
        return N;
      }
      const keep = new Uint8Array(N);
      let kept = 0;
      for (let t = 0; t < N; t++) {
        if (time.on) { const p = T.doc_periods[t]; if (p < time.p0 || p > time.p1) continue; }
        if (passes(t)) { keep[t] = 1; kept++; }
      }
      state.docFilter = keep;
      state.dim = null;
      if (filters.size) {
        const share = keptShare(keep);
        let top = 0;
        for (let i = 0; i < L; i++) top = Math.max(top, share[i]);
        state.dim = share.map((v) => (top > 0 ? v / top : 0));
      }
      if (info) info.textContent = filters.size ? `${fmt(kept)} of ${fmt(N)} documents kept` : "";
      return kept;
    }
    // spec: null (no filter), an array of level names, or [lo, hi] (numbers; null: open)
    function setFilter(name, spec) {
      const k = FILTERABLE.findIndex((c) => c.name === name);
      if (k < 0) return null;
      const col = FILTERABLE[k];
      if (spec === null || spec === undefined) filters.delete(k);
      else if (col.kind === "categorical") {
        if (!Array.isArray(spec)) return null;
        filters.set(k, new Set(spec.map((v) => col.levels.indexOf(String(v))).filter((c) => c >= 0)));
      } else {
        if (!Array.isArray(spec) || spec.length !== 2) return null;
        const num = (v, inf) => (v === null || v === "" || v === undefined || !Number.isFinite(Number(v)) ? inf : Number(v));
        filters.set(k, [num(spec[0], -Infinity), num(spec[1], Infinity)]);
      }
      const kept = updateFilter();
      syncFilterControls();
      refreshLists();
      draw();
      return kept;
    }
    const filterControls = [];
    function syncFilterControls() {
      for (const [k, boxes, lo, hi] of filterControls) {
        const f = filters.get(k);
        if (boxes) boxes.forEach((b, c) => { b.checked = !f || f.has(c); });
        else { lo.value = f && f[0] !== -Infinity ? String(f[0]) : ""; hi.value = f && f[1] !== Infinity ? String(f[1]) : ""; }
      }
    }
    function renderFilters() {
      if (!FILTERABLE.length || !N) return;
      const box = $("cg-filters");
      FILTERABLE.forEach((col, k) => {
        const fs = document.createElement("fieldset");
        fs.appendChild(Object.assign(document.createElement("legend"), { textContent: col.name }));
        if (col.kind === "categorical") {
          const boxes = [];
          const readBoxes = () => {
            const on = boxes.map((b, c) => (b.checked ? col.levels[c] : null)).filter((v) => v !== null);
            setFilter(col.name, on.length === col.levels.length ? null : on);
          };
          const all = Object.assign(document.createElement("button"), { type: "button", textContent: "all" });
          const none = Object.assign(document.createElement("button"), { type: "button", textContent: "none" });
          all.addEventListener("click", () => setFilter(col.name, null));
          none.addEventListener("click", () => setFilter(col.name, []));
          const list = document.createElement("div");
          list.className = "cg-filter-levels";
          col.levels.forEach((lev, c) => {
            const label = document.createElement("label");
            const b = Object.assign(document.createElement("input"), { type: "checkbox", checked: true });
            b.addEventListener("change", readBoxes);
            boxes.push(b);
            label.append(b, ` ${lev}` + (col.counts ? ` (${fmt(col.counts[c])})` : ""));
            list.appendChild(label);
          });
          fs.append(all, none, list);
          filterControls.push([k, boxes, null, null]);
        } else {
          let vmin = Infinity, vmax = -Infinity;
          for (const v of col.doc_values) if (Number.isFinite(v)) { vmin = Math.min(vmin, v); vmax = Math.max(vmax, v); }
          const input = (ph) => Object.assign(document.createElement("input"), { type: "number", step: "any", placeholder: Number.isFinite(ph) ? String(+ph.toPrecision(4)) : "" });
          const lo = input(vmin), hi = input(vmax);
          const read = () => setFilter(col.name, lo.value === "" && hi.value === "" ? null : [lo.value, hi.value]);
          lo.addEventListener("change", read); hi.addEventListener("change", read);
          fs.append(lo, Object.assign(document.createElement("span"), { textContent: " to " }), hi);
          filterControls.push([k, null, lo, hi]);
        }
        box.appendChild(fs);
      });
      $("cg-filters-box").hidden = false;
    }

    // ---- exports
    // rank, index and score are numbers the page computes; id, title, link and snippet are
    // texts of the corpus, neutralised as formulas unless the map was written with
    // escape_formulas=False
    const escapeFormulas = D.escape_formulas !== false;
    function csvText() {
      const q = (v) => { const s = String(v); return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s; };
      const text = (v) => { const s = String(v); return escapeFormulas && FORMULA_START.test(s) ? "'" + s : s; };
      const rows = [["rank", "index", "id", "title", "score", "link", "snippet"].join(",")];
      state.listed.forEach((t, k) => rows.push([k + 1, D.doc_index[t], text(D.ids[t]), text(D.titles[t]),
        state.scores[k].toFixed(6), text(D.links ? safeHref(D.links[t]) : ""), text(D.snippets[t])].map(q).join(",")));
      return rows.join("\r\n") + "\r\n";
    }
    function download(name, blob) {
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob); a.download = name;
      document.body.appendChild(a); a.click(); a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    }
    $("cg-csv").addEventListener("click", () => {
      const r = Math.floor(state.pinned / E2), c = state.pinned % E2;
      download(`countgrid-documents-${r}-${c}.csv`, new Blob([csvText()], { type: "text/csv" }));
    });
    $("cg-note-text").addEventListener("change", () => { if (state.pinned >= 0) setNote(state.pinned, $("cg-note-text").value); });
    $("cg-notes-save").addEventListener("click", () => download("countgrid-notes.json",
      new Blob([JSON.stringify(annotations(), null, 1)], { type: "application/json" })));
    $("cg-notes-load").addEventListener("click", () => $("cg-notes-file").click());
    $("cg-notes-file").addEventListener("change", async () => {
      const f = $("cg-notes-file").files[0];
      $("cg-notes-file").value = "";
      if (!f) return;
      let msg;
      if (f.size > (1 << 20)) msg = "larger than 1 MB";
      else {
        try { msg = loadAnnotations(JSON.parse(await f.text())); } catch (err) { msg = "not a JSON file"; }
      }
      $("cg-status").textContent = msg ? `Notes not loaded: ${msg}.` : "Notes loaded.";
    });
    $("cg-png").addEventListener("click", () => canvas.toBlob((b) => download("countgrid-map.png", b), "image/png"));
    $("cg-reset").addEventListener("click", () => { fitView(); draw(); });

    // ---- search box (exact words, several separated by spaces; suggestions by prefix)
    const input = $("cg-search");
    const mode = $("cg-search-mode");
    if (!N) mode.querySelector('option[value="documents"]').disabled = true;
    const runSearch = () => (mode.value === "documents" ? searchDocuments(input.value) : search(input.value));
    mode.addEventListener("change", () => {
      input.placeholder = mode.value === "documents" ? "Search titles and snippets\u2026" : "Search words\u2026";
      if (input.value.trim()) runSearch();
    });
    $("cg-search-form").addEventListener("submit", (e) => { e.preventDefault(); runSearch(); });
    input.addEventListener("input", () => {
      if (!input.value.trim()) { search(""); return; }
      if (mode.value === "documents") return;
      const last = input.value.split(/[\s,;]+/).pop().toLowerCase();
      const dl = $("cg-suggest");
      dl.textContent = "";
      if (last.length < 2) return;
      let n = 0;
      for (const w of vocab) {
        if (w.toLowerCase().startsWith(last)) {
          dl.appendChild(Object.assign(document.createElement("option"), { value: w }));
          if (++n >= 12) break;
        }
      }
    });

    // ---- pointer: drag pans (wrapping: the view is unbounded, cells are taken modulo the
    // extent), a click without drag pins a cell, the wheel zooms about the pointer
    let drag = null;
    const lassoButton = $("cg-lasso");
    let lassoOn = false;
    if (lassoButton) {
      lassoButton.addEventListener("click", () => {
        lassoOn = !lassoOn;
        lassoButton.setAttribute("aria-pressed", String(lassoOn));
        canvas.classList.toggle("cg-lassoing", lassoOn);
      });
    }
    canvas.addEventListener("pointerdown", (e) => {
      drag = { x: e.clientX, y: e.clientY, ox: view.ox, oy: view.oy, moved: false, select: e.shiftKey,
        lasso: !e.shiftKey && (e.altKey || lassoOn) };
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener("pointermove", (e) => {
      const rect = canvas.getBoundingClientRect();
      if (drag) {
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) { drag.moved = true; canvas.classList.add("cg-dragging"); }
        if (drag.moved && drag.lasso) {            // alt-drag (or "Lasso"): a free shape
          if (!state.lasso) state.lasso = [[drag.x - rect.left, drag.y - rect.top]];
          state.lasso.push([e.clientX - rect.left, e.clientY - rect.top]);
          scheduleDraw();
        } else if (drag.moved && drag.select) {    // shift-drag: a rectangle of cells
          const x0 = drag.x - rect.left, y0 = drag.y - rect.top;
          state.rubber = [x0, y0, e.clientX - rect.left, e.clientY - rect.top];
          scheduleDraw();
        } else if (drag.moved) { view.ox = drag.ox - dx / view.s; view.oy = drag.oy - dy / view.s; scheduleDraw(); }
        return;
      }
      const [r, c, i] = cellAt(e.clientX - rect.left, e.clientY - rect.top);
      const words = [];
      for (let j = 0; j < Math.min(K, 8); j++) if (D.top_weights[i * K + j] > 0) words.push(vocab[D.top_words[i * K + j]]);
      let extra = "";
      if (state.colouring) {
        const col = state.colouring;
        if (col.kind === "categorical") {
          let best = 0;
          for (let k = 1; k < col.levels.length; k++) if (col.values[i * col.levels.length + k] > col.values[i * col.levels.length + best]) best = k;
          extra = ` · ${col.name}: ${col.levels[best]} ${(100 * col.values[i * col.levels.length + best]).toFixed(0)} %`;
        } else if (col.kind === "time") extra = ` · ${(100 * col.values[i]).toFixed(2)} % of the documents of ${col.range}`;
        else extra = ` · ${col.name}: ${(+col.values[i].toPrecision(4))}`;
      }
      const note = state.notes.get(i);
      $("cg-status").textContent = `cell (${r}, ${c}): ${words.join(", ")}${extra}` + (note ? ` · note: ${note}` : "");
    });
    const endDrag = (e) => {
      if (!drag) return;
      const rect = canvas.getBoundingClientRect();
      if (!drag.moved && e.type === "pointerup") {
        const [r, c] = cellAt(e.clientX - rect.left, e.clientY - rect.top);
        pin(r, c);
      } else if (drag.select && state.rubber && e.type === "pointerup") {
        const [ax, ay, bx, by] = state.rubber;
        const wx = (px) => Math.floor(view.ox + px / view.s), wy = (py) => Math.floor(view.oy + py / view.s);
        selectRect(Math.min(wy(ay), wy(by)), Math.min(wx(ax), wx(bx)), Math.max(wy(ay), wy(by)), Math.max(wx(ax), wx(bx)));
      } else if (drag.lasso && state.lasso && e.type === "pointerup") {
        const pts = state.lasso.map(([px, py]) => [view.oy + py / view.s, view.ox + px / view.s]);
        state.lasso = null;
        selectLasso(pts);
      }
      state.rubber = null; state.lasso = null;
      drag = null;
      canvas.classList.remove("cg-dragging");
    };
    canvas.addEventListener("pointerup", endDrag);
    canvas.addEventListener("pointercancel", endDrag);
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      const rect = canvas.getBoundingClientRect();
      zoomAt(e.clientX - rect.left, e.clientY - rect.top, Math.exp(-e.deltaY * 0.0015));
      scheduleDraw();
    }, { passive: false });
    canvas.tabIndex = 0;
    canvas.addEventListener("keydown", (e) => {
      const step = Math.max(1, Math.round(cw / view.s / 8));
      const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
      if (moves[e.key]) { view.ox += moves[e.key][0]; view.oy += moves[e.key][1]; }
      else if (e.key === "+" || e.key === "=") zoomAt(cw / 2, ch / 2, 1.25);
      else if (e.key === "-") zoomAt(cw / 2, ch / 2, 0.8);
      else return;
      e.preventDefault();
      scheduleDraw();
    });
    new ResizeObserver(() => { resize(); draw(); }).observe(stage);

    // The documents arrive after the first frame (docs/map.md, "Size and speed"): what
    // needs them (lists, document search, time ranges, filters) waits for them; a call
    // made before they are in runs once they are (the latest one).
    let pendingWhat = null;      // the call waiting, for the frame that replaces a preview
    const needsDocuments = (fn, name) => function (...args) {
      if (docsIn) return fn.apply(this, args);
      pendingCall = () => fn.apply(this, args);
      pendingWhat = { name, args };
      $("cg-panel-info").textContent = "Loading the documents\u2026";
      return null;
    };
    pin = needsDocuments(pin, "pin"); selectRect = needsDocuments(selectRect, "selectRect");
    selectLasso = needsDocuments(selectLasso, "selectLasso");
    searchDocuments = needsDocuments(searchDocuments, "searchDocuments");
    setTime = needsDocuments(setTime, "setTime"); setFilter = needsDocuments(setFilter, "setFilter");
    const carried = { pin: (a) => pin(a[0], a[1]), selectRect: (a) => selectRect(a[0], a[1], a[2], a[3]),
      selectLasso: (a) => selectLasso(a[0]), searchDocuments: (a) => searchDocuments(String(a[0])) };

    resize();
    renderRegions();
    markSparklines();
    if (D.color_by) colorBy(D.color_by);
    // two corpora (docs/map.md, "Two corpora"): open on where they differ
    if (D.compare && Array.isArray(D.compare) && D.compare.length === 3) showDifference(D.compare[0], D.compare[1], D.compare[2]);
    // a shared link's place and colouring at once; the rest once the documents are in
    if (OWN_PAGE && location.hash.length > 1) applyViewState(location.hash);
    draw();
    const firstFrameMs = performance.now();

    function attachDocuments(docs) {
      for (const key of Object.keys(docs)) if (key !== "colorings" && key !== "time") D[key] = docs[key];
      (docs.colorings || []).forEach((c, k) => Object.assign(D.colorings[k], c));
      if (docs.time && T) Object.assign(T, docs.time);
      docsIn = true;
      renderFilters();
      if (OWN_PAGE && location.hash.length > 1) applyViewState(location.hash);
      ready = true;
      window.addEventListener("hashchange", () => { if (location.hash !== viewState()) applyViewState(location.hash); });
      if (pendingCall) { const call = pendingCall; pendingCall = null; pendingWhat = null; call(); }
      if (!state.listed.length && !state.docResults.length) $("cg-panel-info").textContent = "Click a cell to list the documents whose windows cover it.";
      draw();
    }
    if (HOST) {
      window.addEventListener("message", (e) => {
        const m = e.data;
        if (e.source !== window.parent || !m || typeof m !== "object") return;
        if (m.type === "countgrid:highlight") highlight(m.cells, m.terms);
        else if (m.type === "countgrid:color") colorBy(typeof m.name === "string" && m.name ? m.name : null);
        else if (m.type === "countgrid:view-request") toHost({ type: "countgrid:view", state: viewState(), pending: pendingWhat });
        else if (m.type === "countgrid:apply-view" && docsIn) {
          // the place, colouring, search and selection of the preview this frame replaces,
          // then the call the preview held for the documents (a click, a rectangle, a lasso)
          if (typeof m.state === "string") applyViewState(m.state);
          const p = m.pending;
          if (p && typeof p === "object" && Object.hasOwn(carried, p.name) && Array.isArray(p.args)) carried[p.name](p.args);
        } else if (m.type === "countgrid:shown") window.countgridMap.shown = true;
        else if (m.type === "countgrid:fail" && !docsIn) fail(new Error(String(m.message).slice(0, 500)));
      });
    }
    const parts = [], nParts = D.bundle ? D.bundle.files.length : 1;
    if (N) $("cg-stats").textContent = `${stats} · loading the documents\u2026`;
    if (HOST) hostParts.then((m) => { if (m.documents === null) toHost({ type: "countgrid:ready", documents: false }); });
    loadDocuments(D, (k, part) => {
      parts.push(part);
      if (nParts > 1) $("cg-stats").textContent = `${stats} · documents ${k + 1}/${nParts}`;
    }).then(() => {
      attachDocuments(joinParts(parts));
      parts.length = 0;
      $("cg-stats").textContent = stats;
      window.countgridMap.documentsMs = performance.now();
      window.countgridMap.ready = true;
      document.documentElement.dataset.ready = "1";
      toHost({ type: "countgrid:ready", documents: true });
    }).catch(fail);

    // A small hook for tests and scripting: real state, not pixels only.
    window.countgridMap = {
      ready: false,         // true once the documents are in (documentsMs)
      shown: !HOST,         // a widget's frame: true once in view (not behind a preview)
      get dataMs() { return hostDataMs; },    // a widget's frame: when its data came
      firstFrameMs,
      documentsMs: null,
      extent: [E1, E2],
      window: [W1, W2],
      search,
      pin,
      colorBy,
      pan(dx, dy) { view.ox += dx; view.oy += dy; draw(); return this.view(); },
      zoom(factor) { zoomAt(cw / 2, ch / 2, factor); draw(); return this.view(); },
      reset() { fitView(); draw(); },
      view() { return { s: view.s, ox: view.ox, oy: view.oy, width: cw, height: ch }; },
      cellAt(px, py) { return cellAt(px, py).slice(0, 2); },
      cellCenter,
      cellWords(i) { return Array.from(D.top_words.slice(i * K, (i + 1) * K), (v) => vocab[v]); },
      cellColor(i) { return state.cellRGB ? state.cellRGB[i].map(Math.round) : null; },
      highlightedCells() { return state.highlightList.slice(); },
      listedDocuments() { return state.listed.map((t) => D.doc_index[t]); },
      listedScores() { return state.scores.slice(); },
      hoverDocument(rankNo) { state.hoverDoc = rankNo < 0 ? -1 : state.listed[rankNo]; draw(); return this.outlinedWindow(); },
      outlinedWindow() {
        if (state.hoverDoc < 0) return null;
        const k = D.doc_map[state.hoverDoc];
        return [Math.floor(k / E2), k % E2];
      },
      flyToRegion,
      viewState,
      applyViewState,
      searchDocuments(q) { mode.value = "documents"; input.value = q; return searchDocuments(q); },
      documentResults() { return state.docResults.map((t) => D.doc_index[t]); },
      colouring() { return state.colouring ? state.colouring.name : null; },
      selectCells(r0, c0, r1, c1) { return selectRect(r0, c0, r1, c1); },
      selectLasso(points) { return selectLasso(points); },
      selectedCells() { const out = []; if (state.selection) for (let i = 0; i < L; i++) if (state.selection[i]) out.push(i); return out; },
      highlight(cells, terms) { return highlight(cells, terms); },
      host: HOST,
      setTime(p0, p1) { return p0 === null ? allDates() : setTime(p0, p1); },
      timeRange() { return time.on ? [time.p0, time.p1] : null; },
      timeLabels() { return T ? T.labels.slice() : []; },
      regionShares(n) { const lev = LEVELS.find((l) => l.n_regions === n); return lev && T ? regionShares(lev).map((r) => Array.from(r)) : null; },
      playing() { return time.timer !== null; },
      renameRegion,
      setNote(r, c, text) { return setNote(mod(Math.floor(r), E1) * E2 + mod(Math.floor(c), E2), text); },
      notes() { return [...state.notes].map(([i, t]) => [Math.floor(i / E2), i % E2, t]); },
      annotations,
      loadAnnotations(doc) { return loadAnnotations(doc); },
      setFilter,
      filters() { return [...filters].map(([k, f]) => [FILTERABLE[k].name, f instanceof Set ? [...f].map((c) => FILTERABLE[k].levels[c]) : [f[0] === -Infinity ? null : f[0], f[1] === Infinity ? null : f[1]]]); },
      keptDocuments() { const out = []; for (let t = 0; t < N; t++) if (shown(t)) out.push(D.doc_index[t]); return out; },
      cellFade() { return state.dim ? Array.from(state.dim) : null; },
      play() { if (time.timer === null && P) startPlay(); },
      compare(name, a, b) { return showDifference(name, a, b === undefined ? null : b); },
      compareRegions() {
        const r = state.colouring && state.colouring.kind === "difference" ? state.colouring.regions : null;
        return r ? { delta: Array.from(r.delta), std: Array.from(r.std), marked: Array.from(r.marked) } : null;
      },
      regionLabels() { return state.placedLabels.map((b) => ({ ...b })); },
      regionLevels() { return LEVELS.map((lev) => lev.n_regions); },
      regionOf(i, n) { const lev = LEVELS.find((l) => l.n_regions === n); return lev ? lev.labels[i] : null; },
      csv: csvText,
      png() { return canvas.toDataURL("image/png"); },
    };
  }

  function fail(err) {
    console.error(err);
    toHost({ type: "countgrid:error", message: String(err && err.message ? err.message : err) });
    const box = $("cg-error");
    box.textContent = "The map could not be shown: " + (err && err.message ? err.message : err);
    box.hidden = false;
    // a map already drawn keeps its hook (the documents part failed)
    window.countgridMap = Object.assign(window.countgridMap || {},
      { ready: false, error: String(err && err.message ? err.message : err) });
  }

  loadData().then(start).catch(fail);
})();
