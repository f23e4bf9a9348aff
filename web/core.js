/*
 * core.js: the dashboard's shared parts. The object cache fed by the
 * server-sent event stream /ui/events (one connection for every kind:
 * a `reset`, a snapshot of ADDED objects, `synced`, then every change),
 * DOM helpers that never parse HTML (text goes in as text), and the
 * Kubernetes value helpers the pages share (quantities, conditions, ages).
 * Exposes one global, D; window.cueueDash is the read-only view the
 * browser tests inspect (docs/dashboard.md).
 */
"use strict";

const D = {
  objs: {},          /* kind -> Map("ns/name" -> object) */
  synced: false,
  pages: {},         /* name -> {render(main, route), leave()} */
  listeners: [],     /* called after a batch of changes */
  renders: 0,
};

window.cueueDash = {
  get synced() { return D.synced; },
  get renders() { return D.renders; },
  errors: [],
};

D.key = (o) => (o.metadata.namespace || "") + "/" + o.metadata.name;
D.list = (kind) => Array.from((D.objs[kind] || new Map()).values());
D.get = (kind, ns, name) => (D.objs[kind] || new Map()).get((ns || "") + "/" + name);

/* Apply one watch event; keep the newer resourceVersion of an object (the
 * snapshot and the first changes may overlap). */
D.apply = function (ev) {
  const o = ev.object;
  if (!o || !o.kind || !o.metadata) return;
  const m = D.objs[o.kind] || (D.objs[o.kind] = new Map());
  const k = D.key(o);
  const old = m.get(k);
  const rv = BigInt(o.metadata.resourceVersion || "0");
  if (old && BigInt(old.metadata.resourceVersion || "0") > rv) return;
  if (ev.type === "DELETED") m.delete(k);
  else m.set(k, o);
};

let pending = null;
D.changed = function () {
  if (pending) return;
  pending = setTimeout(() => {
    pending = null;
    for (const f of D.listeners) f();
  }, 50);
};

D.connect = function () {
  const conn = document.getElementById("conn");
  const es = new EventSource("events");
  es.addEventListener("reset", () => {
    D.objs = {};
    D.synced = false;
  });
  es.addEventListener("synced", () => {
    D.synced = true;
    conn.textContent = "live";
    conn.dataset.state = "live";
    D.changed();
  });
  es.onmessage = (e) => {
    D.apply(JSON.parse(e.data));
    if (D.synced) D.changed();
  };
  es.onerror = () => {
    conn.textContent = "reconnecting…";
    conn.dataset.state = "reconnecting";
  };
};

/* h("div", {class: "x", dataset: {a: 1}}, child, "text", [more]) */
function h(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "dataset") Object.assign(e.dataset, v);
    else if (k === "style") e.style.cssText = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  const add = (c) => {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) c.forEach(add);
    else e.append(c instanceof Node ? c : String(c));
  };
  kids.forEach(add);
  return e;
}
D.h = h;
/* Append children (arrays flattened, null/false skipped) to an element. */
D.fill = (e, ...kids) => {
  const box = h("div", {}, ...kids);
  e.append(...box.childNodes);
  return e;
};

D.table = function (cols, rows, attrs) {
  return h("table", attrs || {},
    h("thead", {}, h("tr", {}, cols.map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", {colspan: cols.length, class: "empty"}, "none"))));
};

/* A Kubernetes quantity ("500m", "64Gi", "1e3", 40) as a number of base units. */
D.qty = function (q) {
  if (q === undefined || q === null || q === "") return 0;
  if (typeof q === "number") return q;
  const m = String(q).match(/^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/);
  if (!m) return NaN;
  const mul = {"": 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
    Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, Pi: 1024 ** 5, Ei: 1024 ** 6}[m[2]];
  return mul === undefined ? NaN : parseFloat(m[1]) * mul;
};

D.cond = (o, type) => ((o && o.status && o.status.conditions) || []).find((c) => c.type === type);
D.isTrue = (o, type) => { const c = D.cond(o, type); return !!c && c.status === "True"; };

D.time = function (ts) {
  if (!ts) return "";
  const d = new Date(ts);
  return isNaN(d) ? String(ts) : d.toLocaleTimeString([], {hour12: false});
};
D.age = function (ts) {
  if (!ts) return "";
  const s = Math.max(0, Math.round((Date.now() - new Date(ts)) / 1000));
  if (s < 120) return s + "s";
  if (s < 7200) return Math.round(s / 60) + "m";
  if (s < 172800) return Math.round(s / 3600) + "h";
  return Math.round(s / 86400) + "d";
};

D.byName = (a, b) => D.key(a).localeCompare(D.key(b));

/* The pool a ResourceFlavor's nodes come from (its gke-nodepool label). */
D.flavorPool = function (flavor) {
  const rf = D.get("ResourceFlavor", "", flavor);
  return (rf && rf.spec && rf.spec.nodeLabels && rf.spec.nodeLabels["cloud.google.com/gke-nodepool"]) || "";
};

/* The ClusterQueue a Workload belongs to: its admission's, else its LocalQueue's. */
D.workloadCQ = function (wl) {
  const a = wl.status && wl.status.admission;
  if (a && a.clusterQueue) return a.clusterQueue;
  const lq = D.get("LocalQueue", wl.metadata.namespace, wl.spec && wl.spec.queueName);
  return (lq && lq.spec && lq.spec.clusterQueue) || "";
};

/* The flavors of a Workload's admission, "main: cpu=on-demand, ..." per pod set. */
D.admissionFlavors = function (wl) {
  const a = wl.status && wl.status.admission;
  if (!a) return [];
  return (a.podSetAssignments || []).map((p) => ({
    podSet: p.name, count: p.count,
    flavors: Array.from(new Set(Object.values(p.flavors || {}))),
  }));
};

D.fetchJSON = async function (url) {
  const r = await fetch(url, {headers: {Accept: "application/json"}});
  if (!r.ok) throw new Error(url + ": HTTP " + r.status);
  return r.json();
};

D.badge = (text, cls) => h("span", {class: "badge " + (cls || String(text).toLowerCase())}, text);
