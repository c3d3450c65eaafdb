/* countgrid notebook widget (docs/map.md, "The notebook widget"): the anywidget view of
 * countgrid.maps.MapWidget.  It holds the map's own page (template, map.css and map.js, the
 * page write_html writes, with an empty data block of format "host") in a sandboxed frame:
 * the notebook's styles and the page's cannot meet, and the page's script cannot reach the
 * notebook.  This module only carries messages between the frame and the widget's model:
 *   frame -> here: hello (send the data), ready, selection, color, error;
 *   here -> frame: data (the two parts as ArrayBuffers), highlight, color. */

function bytesOf(value) {
  // a Bytes trait arrives as a DataView (ipywidgets' buffers); a copy is transferred
  if (!value) return new ArrayBuffer(0);
  if (value instanceof ArrayBuffer) return value.slice(0);
  return new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice().buffer;
}

function render({ model, el }) {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts allow-downloads");
  frame.setAttribute("title", "countgrid map");
  frame.className = "countgrid-widget";
  const size = () => {
    frame.style.cssText = "display:block;width:100%;border:1px solid #ddd;box-sizing:border-box;" +
      `height:${Math.max(100, Number(model.get("height")) || 640)}px`;
  };
  size();
  const post = (msg, transfer) => {
    if (frame.contentWindow) frame.contentWindow.postMessage(msg, "*", transfer || []);
  };
  let ready = false;
  const sendHighlight = () => {
    const h = model.get("_highlight_state") || {};
    if (ready) post({ type: "countgrid:highlight", cells: h.cells || [], terms: h.terms || [] });
  };
  const sendColor = () => { if (ready) post({ type: "countgrid:color", name: model.get("color_by") || "" }); };
  const onMessage = (e) => {
    if (e.source !== frame.contentWindow) return;
    const m = e.data;
    if (!m || typeof m !== "object") return;
    if (m.type === "countgrid:hello") {
      const map = bytesOf(model.get("_map_part")), documents = bytesOf(model.get("_documents_part"));
      post({ type: "countgrid:data", map, documents }, [map, documents]);
    } else if (m.type === "countgrid:ready") {
      ready = true;
      sendHighlight();
      if (model.get("color_by")) sendColor();
    } else if (m.type === "countgrid:selection") {
      const ints = (a) => Array.isArray(a) ? a.filter((v) => Number.isInteger(v)) : [];
      model.set("_selection_state", {
        kind: m.kind === "cell" ? "cell" : "cells",
        cells: ints(m.cells),
        kept: Array.isArray(m.kept) ? ints(m.kept) : null,
      });
      model.save_changes();
    } else if (m.type === "countgrid:color") {
      model.set("color_by", typeof m.name === "string" ? m.name : "");
      model.save_changes();
    } else if (m.type === "countgrid:error") {
      model.set("_error", String(m.message).slice(0, 500));
      model.save_changes();
    }
  };
  window.addEventListener("message", onMessage);
  model.on("change:_highlight_state", sendHighlight);
  model.on("change:color_by", sendColor);
  model.on("change:height", size);
  frame.srcdoc = model.get("_page");
  el.appendChild(frame);
  return () => {
    window.removeEventListener("message", onMessage);
    model.off("change:_highlight_state", sendHighlight);
    model.off("change:color_by", sendColor);
    model.off("change:height", size);
  };
}

export default { render };
