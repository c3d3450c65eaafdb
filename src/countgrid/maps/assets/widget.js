/* countgrid notebook widget (docs/map.md, "The notebook widget"): the anywidget view of
 * countgrid.maps.MapWidget.  It holds the map's own page (template, map.css and map.js, the
 * page write_html writes, with an empty data block of format "host") in a sandboxed frame:
 * the notebook's styles and the page's cannot meet, and the page's script cannot reach the
 * notebook.  This module only carries messages between the frames and the widget's model:
 *   frame -> here: hello (send the data), ready, selection, color, error, view;
 *   here -> frame: data (the two parts as ArrayBuffers), highlight, color, view-request,
 *   apply-view, shown, fail (the kernel could not place the documents).
 * While the kernel places a large corpus's documents (_documents_part still empty), the
 * frame shows the map without them (a preview: documents null); a second frame loads the
 * page out of sight meanwhile, gets the whole map once the documents are in, and takes the
 * preview's place, view and pending click. */

function bytesOf(value) {
  // a Bytes trait arrives as a DataView (ipywidgets' buffers); a copy is transferred
  if (!value) return new ArrayBuffer(0);
  if (value instanceof ArrayBuffer) return value.slice(0);
  return new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice().buffer;
}

const byteLength = (value) => (value ? value.byteLength : 0);
// the start of the kernel's _error when placing the documents failed (MapWidget._place)
const PLACING_FAILED = "the documents could not be placed";

function render({ model, el }) {
  const box = document.createElement("div");
  box.style.cssText = "position:relative;width:100%";
  el.appendChild(box);
  const height = () => `${Math.max(100, Number(model.get("height")) || 640)}px`;
  const hasDocuments = () => byteLength(model.get("_documents_part")) > 0;
  let shown = null;      // the frame in view
  let loading = null;    // the whole map's frame, loading behind a preview
  let swapTimer = null;

  const style = (f) => {
    f.frame.style.cssText = "display:block;width:100%;border:1px solid #ddd;box-sizing:border-box;" +
      `height:${height()}` + (f === loading ? ";position:absolute;left:0;top:0;visibility:hidden" : "");
  };
  const post = (f, msg, transfer) => {
    if (f && f.frame.contentWindow) f.frame.contentWindow.postMessage(msg, "*", transfer || []);
  };
  const makeFrame = () => {
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts allow-downloads");
    frame.setAttribute("title", "countgrid map");
    frame.className = "countgrid-widget-loading";     // countgrid-widget once in view
    return { frame, whole: false, ready: false, waiting: false };
  };
  const start = (f) => {
    if (f !== loading) f.frame.className = "countgrid-widget";
    style(f);
    f.frame.srcdoc = model.get("_page");
    box.appendChild(f.frame);
  };
  const sendHighlight = () => {
    const h = model.get("_highlight_state") || {};
    if (shown && shown.ready) post(shown, { type: "countgrid:highlight", cells: h.cells || [], terms: h.terms || [] });
  };
  const sendColor = () => {
    if (shown && shown.ready) post(shown, { type: "countgrid:color", name: model.get("color_by") || "" });
  };
  const inView = () => {     // shown is ready: it gets what Python set
    if (shown.whole) post(shown, { type: "countgrid:shown" });
    sendHighlight();
    if (model.get("color_by")) sendColor();
  };
  const swap = (view) => {   // the whole map takes the preview's place
    clearTimeout(swapTimer);
    if (!loading) return;
    const old = shown;
    shown = loading;
    loading = null;
    shown.frame.className = "countgrid-widget";
    style(shown);
    if (view) post(shown, { type: "countgrid:apply-view", state: view.state, pending: view.pending });
    if (old) old.frame.remove();
    inView();
  };
  const sendData = (f) => {
    const map = bytesOf(model.get("_map_part"));
    const documents = f.whole ? bytesOf(model.get("_documents_part")) : null;
    post(f, { type: "countgrid:data", map, documents }, documents ? [map, documents] : [map]);
  };
  const loadWhole = () => {    // the page loads at once; its data once the documents are in
    if (loading || (shown && shown.whole)) return;
    loading = makeFrame();
    loading.whole = true;
    start(loading);
  };

  const onMessage = (e) => {
    const f = [shown, loading].find((g) => g && e.source === g.frame.contentWindow);
    if (!f) return;
    const m = e.data;
    if (!m || typeof m !== "object") return;
    if (m.type === "countgrid:hello") {
      if (f === loading && !hasDocuments()) f.waiting = true;
      else {
        // a frame made as a preview whose documents came meanwhile is the whole map at once
        if (hasDocuments()) f.whole = true;
        sendData(f);
      }
    } else if (m.type === "countgrid:ready") {
      f.ready = true;
      if (f === loading) {
        // the preview's place, colouring, search and pending click, then the swap (at
        // once if the preview does not answer: it may not have drawn yet)
        post(shown, { type: "countgrid:view-request" });
        swapTimer = setTimeout(() => swap(null), 300);
      } else {
        inView();
        if (!f.whole) { onError(); loadWhole(); }
      }
    } else if (m.type === "countgrid:view" && f === shown && loading && loading.ready) {
      swap({ state: typeof m.state === "string" ? m.state.slice(0, 4000) : "", pending: m.pending || null });
    } else if (m.type === "countgrid:selection" && f === shown) {
      const ints = (a) => Array.isArray(a) ? a.filter((v) => Number.isInteger(v)) : [];
      model.set("_selection_state", {
        kind: m.kind === "cell" ? "cell" : "cells",
        cells: ints(m.cells),
        kept: Array.isArray(m.kept) ? ints(m.kept) : null,
      });
      model.save_changes();
    } else if (m.type === "countgrid:color" && f === shown) {
      model.set("color_by", typeof m.name === "string" ? m.name : "");
      model.save_changes();
    } else if (m.type === "countgrid:error") {
      model.set("_error", String(m.message).slice(0, 500));
      model.save_changes();
    }
  };
  const onDocuments = () => {
    if (!hasDocuments()) return;
    if (loading && loading.waiting) { loading.waiting = false; sendData(loading); }
  };
  const onHeight = () => { for (const f of [shown, loading]) if (f) style(f); };
  const onError = () => {    // placing the documents failed in the kernel: the preview says so
    const message = String(model.get("_error") || "");
    if (message.startsWith(PLACING_FAILED) && shown && !shown.whole) post(shown, { type: "countgrid:fail", message });
  };
  window.addEventListener("message", onMessage);
  model.on("change:_highlight_state", sendHighlight);
  model.on("change:color_by", sendColor);
  model.on("change:height", onHeight);
  model.on("change:_documents_part", onDocuments);
  model.on("change:_error", onError);
  shown = makeFrame();
  start(shown);
  return () => {
    clearTimeout(swapTimer);
    window.removeEventListener("message", onMessage);
    model.off("change:_highlight_state", sendHighlight);
    model.off("change:color_by", sendColor);
    model.off("change:height", onHeight);
    model.off("change:_documents_part", onDocuments);
    model.off("change:_error", onError);
  };
}

export default { render };
