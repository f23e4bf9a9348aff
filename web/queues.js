/*
 * queues.js: the Queues page. Every ClusterQueue under its cohort tree;
 * per flavor and resource its nominal quota, reservation, usage,
 * borrowed and lent as bars (values as the API writes them); its pending
 * workloads in admission order with position, reason and the estimated
 * admission time, from Kueue's visibility API (the same answer
 * `cueue describe workload` prints), fetched again whenever a Workload or
 * ClusterQueue changes; its admitted workloads with their flavors; the
 * LocalQueues of every namespace.
 */
"use strict";

(function () {
  const h = D.h;
  const pending = {};      /* cq -> visibility items */
  let fetchTimer = null;
  let lastSig = "";

  function signature() {
    return D.list("Workload").concat(D.list("ClusterQueue"))
      .map((o) => o.metadata.uid + o.metadata.resourceVersion).sort().join();
  }

  function refreshPending(rerender) {
    const sig = signature();
    if (sig === lastSig) return;
    lastSig = sig;
    clearTimeout(fetchTimer);
    fetchTimer = setTimeout(async () => {
      for (const cq of D.list("ClusterQueue")) {
        const n = cq.metadata.name;
        try {
          const r = await D.fetchJSON("../apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/" +
            encodeURIComponent(n) + "/pendingworkloads");
          pending[n] = r.items || [];
        } catch (e) {
          pending[n] = null;
        }
      }
      rerender();
    }, 200);
  }

  /* status.flavorsUsage / flavorsReservation as {flavor/resource: entry} */
  function statusMap(cq, field) {
    const m = {};
    for (const f of (cq.status && cq.status[field]) || [])
      for (const r of f.resources || []) m[f.name + "/" + r.name] = r;
    return m;
  }

  /* What other members of the cohort borrow of flavor/resource: what this
   * queue may have lent (at most its unused nominal quota). */
  function lentOf(cq, flavor, res, nominal, used) {
    const cohort = cq.spec.cohort;
    if (!cohort) return 0;
    let borrowed = 0;
    for (const o of D.list("ClusterQueue")) {
      if (o === cq || o.spec.cohort !== cohort) continue;
      const u = statusMap(o, "flavorsUsage")[flavor + "/" + res];
      if (u) borrowed += D.qty(u.borrowed);
    }
    return Math.max(0, Math.min(borrowed, nominal - used));
  }

  function bar(cells) {
    const {nominal, reserved, used, borrowed, lent} = cells;
    const top = Math.max(nominal, reserved, used, 1e-9);
    const pct = (v) => Math.min(100, (100 * v) / top).toFixed(2) + "%";
    return h("div", {class: "bar", title: "reserved / in use / nominal quota"},
      h("div", {class: "bar-reserved", style: "width:" + pct(reserved)}),
      h("div", {class: "bar-used", style: "width:" + pct(used)}),
      h("div", {class: "bar-nominal", style: "left:" + pct(nominal)}),
      borrowed > 0 ? h("div", {class: "bar-borrowed", style: "left:" + pct(nominal) + ";width:" +
        pct(Math.max(0, reserved - nominal))}) : null,
      lent > 0 ? h("div", {class: "bar-lent", style: "left:" + pct(nominal - lent) + ";width:" + pct(lent)}) : null);
  }

  function quotaTable(cq) {
    const usage = statusMap(cq, "flavorsUsage");
    const resv = statusMap(cq, "flavorsReservation");
    const rows = [];
    for (const g of cq.spec.resourceGroups || []) {
      for (const f of g.flavors || []) {
        for (const r of f.resources || []) {
          const k = f.name + "/" + r.name;
          const u = usage[k] || {}, v = resv[k] || {};
          const nominal = D.qty(r.nominalQuota), used = D.qty(u.total), reserved = D.qty(v.total);
          const borrowed = D.qty(v.borrowed);
          const lent = lentOf(cq, f.name, r.name, nominal, reserved);
          rows.push(h("tr", {class: "quota", dataset: {cq: cq.metadata.name, flavor: f.name, resource: r.name}},
            h("td", {}, f.name), h("td", {}, r.name),
            h("td", {class: "num v-nominal"}, String(r.nominalQuota)),
            h("td", {class: "num v-reserved"}, String(v.total ?? "0")),
            h("td", {class: "num v-usage"}, String(u.total ?? "0")),
            h("td", {class: "num v-borrowed"}, String(v.borrowed ?? "0")),
            h("td", {class: "num v-lent"}, String(lent)),
            h("td", {class: "barcell"}, bar({nominal, reserved, used, borrowed, lent}))));
        }
      }
    }
    return D.table(["flavor", "resource", "nominal", "reserved", "in use", "borrowed", "lent", ""], rows,
      {class: "quota-table"});
  }

  function pendingTable(cq) {
    const items = pending[cq.metadata.name];
    if (items === undefined) return h("p", {class: "muted"}, "loading pending workloads…");
    if (items === null) return h("p", {class: "muted"}, "the visibility API did not answer");
    const rows = items.map((it) => h("tr", {class: "pending-wl", dataset: {name: it.metadata.name,
      position: it.positionInClusterQueue}},
      h("td", {class: "num v-position"}, String(it.positionInClusterQueue)),
      h("td", {}, it.metadata.namespace + "/" + it.metadata.name),
      h("td", {}, it.localQueueName || ""),
      h("td", {class: "num"}, String(it.priority ?? 0)),
      h("td", {class: "v-reason"}, it.reason || "", it.message ? h("div", {class: "muted small"}, it.message) : null),
      h("td", {class: "v-eta", dataset: {eta: it.estimatedAdmissionTime || ""}},
        it.estimatedAdmissionTime ? new Date(it.estimatedAdmissionTime).toLocaleString([], {hour12: false}) : "unknown")));
    return D.table(["position", "workload", "local queue", "priority", "why it waits", "estimated admission"], rows,
      {class: "pending-table"});
  }

  function admittedTable(cq) {
    const wls = D.list("Workload").filter((w) => w.status && w.status.admission &&
      w.status.admission.clusterQueue === cq.metadata.name && !D.isTrue(w, "Finished")).sort(D.byName);
    const rows = wls.map((w) => h("tr", {class: "admitted-wl", dataset: {name: w.metadata.name}},
      h("td", {}, w.metadata.namespace + "/" + w.metadata.name),
      h("td", {}, D.isTrue(w, "Admitted") ? D.badge("Admitted", "ok") : D.badge("QuotaReserved", "warn")),
      h("td", {class: "v-flavors"}, D.admissionFlavors(w).map((p) => p.podSet + " ×" + p.count + ": " +
        p.flavors.join(", ")).join("; ")),
      h("td", {}, ((w.status.admissionChecks) || []).map((c) => c.name + "=" + c.state).join(", "))));
    return D.table(["workload", "state", "flavors", "admission checks"], rows, {class: "admitted-table"});
  }

  function cqCard(cq) {
    const st = cq.status || {};
    return h("section", {class: "card cq", dataset: {cq: cq.metadata.name}},
      h("h3", {}, "ClusterQueue ", h("b", {}, cq.metadata.name),
        D.isTrue(cq, "Active") ? D.badge("Active", "ok") : D.badge("Inactive", "bad"),
        h("span", {class: "muted small"}, " pending " + (st.pendingWorkloads ?? 0) + " · reserving " +
          (st.reservingWorkloads ?? 0) + " · admitted " + (st.admittedWorkloads ?? 0))),
      quotaTable(cq),
      h("h4", {}, "Pending, in admission order"), pendingTable(cq),
      h("h4", {}, "Admitted"), admittedTable(cq));
  }

  /* Cohorts (objects or names ClusterQueues give) as a tree of their queues. */
  function cohortTree(cqs) {
    const parent = {};
    for (const c of D.list("Cohort")) parent[c.metadata.name] = (c.spec && (c.spec.parentName || c.spec.parent)) || "";
    for (const q of cqs) if (q.spec.cohort && !(q.spec.cohort in parent)) parent[q.spec.cohort] = "";
    const node = (name, depth) => h("li", {class: "cohort", dataset: {cohort: name}},
      h("span", {class: "cohort-name"}, "cohort " + name),
      h("ul", {},
        Object.keys(parent).filter((c) => parent[c] === name).sort().map((c) => node(c, depth + 1)),
        cqs.filter((q) => q.spec.cohort === name).map((q) => h("li", {}, "ClusterQueue " + q.metadata.name))));
    const roots = Object.keys(parent).filter((c) => !parent[c]).sort();
    if (!roots.length) return null;
    return h("section", {class: "card"}, h("h3", {}, "Cohorts"), h("ul", {class: "tree"}, roots.map((r) => node(r, 0))));
  }

  function localQueues() {
    const lqs = D.list("LocalQueue").sort(D.byName);
    const rows = lqs.map((lq) => h("tr", {class: "lq", dataset: {name: lq.metadata.name, namespace: lq.metadata.namespace}},
      h("td", {}, lq.metadata.namespace), h("td", {}, lq.metadata.name), h("td", {}, lq.spec.clusterQueue),
      h("td", {class: "num v-pending"}, String((lq.status && lq.status.pendingWorkloads) ?? 0)),
      h("td", {class: "num v-reserving"}, String((lq.status && lq.status.reservingWorkloads) ?? 0)),
      h("td", {class: "num v-admitted"}, String((lq.status && lq.status.admittedWorkloads) ?? 0))));
    return h("section", {class: "card"}, h("h3", {}, "LocalQueues"),
      D.table(["namespace", "name", "ClusterQueue", "pending", "reserving", "admitted"], rows, {class: "lq-table"}));
  }

  D.pages.queues = {
    render(main, route, rerender) {
      refreshPending(rerender);
      const cqs = D.list("ClusterQueue").sort(D.byName);
      D.fill(main, h("h2", {}, "Queues"), cohortTree(cqs),
        cqs.length ? cqs.map(cqCard) : h("p", {class: "muted"}, "No ClusterQueues yet."), localQueues());
    },
  };
})();
