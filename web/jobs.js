/*
 * jobs.js: the Jobs page. Every Job and RayJob with its status, queue,
 * Workload, pod sets' flavors and the pools those flavors' nodes come
 * from. One job's page adds the time of every step (created, quota
 * reserved, each admission check, admitted, running, finished), its pods,
 * a pod's log with follow (a streamed GET .../log?follow=true), and the
 * metrics its workers reported plotted over time with uPlot: every
 * "Epoch N: Loss X" line of each worker's log, loss against epoch, one
 * series per worker (pod). The logs are read again when a pod of the job
 * changes or the followed log prints an epoch.
 */
"use strict";

(function () {
  const h = D.h;
  const EPOCH_RE = /Epoch (\d+): Loss ([-+0-9.eE]+|nan|inf)/g;
  const COLORS = ["#2f6fdf", "#d9480f", "#2b8a3e", "#9c36b5", "#e67700", "#0b7285", "#c2255c", "#5c940d"];
  const MAX_LOG_CHARS = 200000;
  let cur = null; /* the job page shown: {key, chartEl, plot, logEl, follow, series, ...} */

  function jobs() {
    return D.list("Job").concat(D.list("RayJob")).sort(D.byName);
  }

  function workloadOf(job) {
    return D.list("Workload").find((w) => (w.metadata.ownerReferences || []).some((r) => r.uid === job.metadata.uid));
  }

  function podsOf(job) {
    const n = job.metadata.name;
    return D.list("Pod").filter((p) => p.metadata.namespace === job.metadata.namespace && (
      (p.metadata.labels || {})["batch.kubernetes.io/job-name"] === n ||
      (p.metadata.ownerReferences || []).some((r) => r.uid === job.metadata.uid) ||
      (p.metadata.labels || {})["ray.io/cluster"] === n))
      .sort((a, b) => workerOf(a).localeCompare(workerOf(b), undefined, {numeric: true}));
  }

  function workerOf(pod) {
    const l = pod.metadata.labels || {};
    const i = l["batch.kubernetes.io/job-completion-index"];
    return i !== undefined ? "worker " + i : pod.metadata.name;
  }

  function status(job) {
    for (const t of ["Complete", "Failed"]) if (D.isTrue(job, t)) return t;
    if (job.kind === "RayJob") return (job.status && (job.status.jobDeploymentStatus || job.status.jobStatus)) || "Pending";
    if (job.spec && job.spec.suspend) return "Suspended";
    return (job.status && job.status.active) ? "Running" : "Pending";
  }

  function flavorsAndPools(wl) {
    const fl = wl ? D.admissionFlavors(wl) : [];
    return {
      flavors: fl.map((p) => p.podSet + ": " + p.flavors.join(", ")).join("; "),
      pools: Array.from(new Set(fl.flatMap((p) => p.flavors.map(D.flavorPool)).filter(Boolean))).join(", "),
    };
  }

  function listPage(main) {
    const rows = jobs().map((j) => {
      const wl = workloadOf(j), fp = flavorsAndPools(wl);
      const st = status(j);
      return h("tr", {class: "job", dataset: {job: j.metadata.name, kind: j.kind}},
        h("td", {}, h("a", {href: "#/jobs/" + j.kind + "/" + j.metadata.namespace + "/" + j.metadata.name}, j.metadata.name)),
        h("td", {}, j.kind), h("td", {}, j.metadata.namespace),
        h("td", {}, ((j.metadata.labels || {})["kueue.x-k8s.io/queue-name"]) || ""),
        h("td", {class: "v-status"}, D.badge(st, st === "Complete" ? "ok" : st === "Failed" ? "bad" : "warn")),
        h("td", {class: "v-flavors"}, fp.flavors), h("td", {class: "v-pools"}, fp.pools),
        h("td", {}, D.age(j.metadata.creationTimestamp)));
    });
    D.fill(main, h("h2", {}, "Jobs"), h("section", {class: "card"},
      D.table(["name", "kind", "namespace", "queue", "status", "flavors", "pools", "age"], rows, {class: "job-table"})));
  }

  function steps(job, wl, pods) {
    const out = [["created", job.metadata.creationTimestamp]];
    const qr = D.cond(wl, "QuotaReserved");
    if (qr && qr.status === "True") out.push(["quota reserved", qr.lastTransitionTime]);
    for (const c of (wl && wl.status && wl.status.admissionChecks) || [])
      out.push(["admission check " + c.name + ": " + c.state, c.lastTransitionTime]);
    const ad = D.cond(wl, "Admitted");
    if (ad && ad.status === "True") out.push(["admitted", ad.lastTransitionTime]);
    const starts = pods.map((p) => p.status && p.status.startTime).filter(Boolean).sort();
    if (starts.length) out.push(["running", starts[0]]);
    for (const t of ["Complete", "Failed"]) {
      const c = D.cond(job, t);
      if (c && c.status === "True") out.push(["finished: " + t, c.lastTransitionTime]);
    }
    return h("ol", {class: "steps"}, out.map(([what, ts]) =>
      h("li", {class: "step", dataset: {step: what}}, h("span", {class: "step-time"}, D.time(ts)), " ", what)));
  }

  function podTable(pods) {
    const rows = pods.map((p) => h("tr", {class: "pod", dataset: {pod: p.metadata.name}},
      h("td", {}, workerOf(p)), h("td", {}, p.metadata.name),
      h("td", {}, (p.spec && p.spec.nodeName) || ""),
      h("td", {}, ((D.list("Node").find((n) => n.metadata.name === (p.spec && p.spec.nodeName)) || {metadata: {}}).metadata.labels || {})["cloud.google.com/gke-nodepool"] || ""),
      h("td", {class: "v-phase"}, (p.status && p.status.phase) || ""),
      h("td", {}, h("button", {type: "button", class: "follow", onclick: () => followLog(p)}, "log"))));
    return D.table(["worker", "pod", "node", "pool", "phase", ""], rows, {class: "pod-table"});
  }

  /* ---- metrics: every worker's "Epoch N: Loss X" lines ---- */
  function parseLoss(text) {
    const pts = [];
    for (const m of text.matchAll(EPOCH_RE)) pts.push([parseInt(m[1], 10), parseFloat(m[2])]);
    return pts;
  }

  async function refreshMetrics(job) {
    const c = cur;
    const pods = podsOf(job).filter((p) => p.status && p.status.phase && p.status.phase !== "Pending");
    const series = {};
    for (const p of pods) {
      try {
        const r = await fetch("../api/v1/namespaces/" + p.metadata.namespace + "/pods/" + p.metadata.name + "/log");
        if (r.ok) {
          const pts = parseLoss(await r.text());
          if (pts.length) series[workerOf(p)] = pts;
        }
      } catch (e) { /* the pod went away: keep what the others said */ }
    }
    if (c !== cur) return;
    c.series = series;
    drawChart(c);
  }

  function drawChart(c) {
    const names = Object.keys(c.series).sort((a, b) => a.localeCompare(b, undefined, {numeric: true}));
    c.chartEl.dataset.series = String(names.length);
    const sig = names.map((n) => n + ":" + c.series[n].length).join();
    if (sig === c.chartSig) return;
    c.chartSig = sig;
    if (c.plot) { c.plot.destroy(); c.plot = null; }
    c.chartEl.textContent = "";
    if (!names.length) {
      c.chartEl.append(h("p", {class: "muted"}, "No \"Epoch N: Loss X\" lines in the workers' logs yet."));
      return;
    }
    /* one x (the epochs of all workers) with one y per worker, a gap where
     * a worker has not reported an epoch: uPlot.join aligns the tables */
    const data = uPlot.join(names.map((n) => [c.series[n].map((p) => p[0]), c.series[n].map((p) => p[1])]));
    const opts = {
      width: Math.max(320, Math.min(900, c.chartEl.clientWidth || 700)), height: 260,
      scales: {x: {time: false}},
      axes: [{label: "epoch"}, {label: "loss"}],
      series: [{label: "epoch"}].concat(names.map((n, i) => ({label: n, stroke: COLORS[i % COLORS.length], width: 2, spanGaps: true}))),
    };
    c.plot = new uPlot(opts, data, c.chartEl);
  }

  /* ---- logs with follow ---- */
  async function followLog(pod) {
    const c = cur;
    if (!c) return;
    if (c.follow) c.follow.abort();
    const ctl = new AbortController();
    c.follow = ctl;
    c.logPod = pod.metadata.name;
    c.logTitle.textContent = "Log of " + pod.metadata.name + " (following)";
    c.logEl.textContent = "";
    const dec = new TextDecoder();
    try {
      const r = await fetch("../api/v1/namespaces/" + pod.metadata.namespace + "/pods/" + pod.metadata.name +
        "/log?follow=true", {signal: ctl.signal});
      const rd = r.body.getReader();
      for (;;) {
        const {value, done} = await rd.read();
        if (done) break;
        const t = dec.decode(value, {stream: true});
        let s = c.logEl.textContent + t;
        if (s.length > MAX_LOG_CHARS) s = s.slice(s.length - MAX_LOG_CHARS);
        c.logEl.textContent = s;
        c.logEl.scrollTop = c.logEl.scrollHeight;
        if (/Epoch \d+: Loss/.test(t)) scheduleMetrics();
      }
      if (c.follow === ctl) c.logTitle.textContent = "Log of " + pod.metadata.name + " (ended)";
    } catch (e) {
      if (e.name !== "AbortError") c.logTitle.textContent = "Log of " + pod.metadata.name + ": " + e.message;
    }
  }

  let metricsTimer = null;
  function scheduleMetrics() {
    if (!cur || metricsTimer) return;
    metricsTimer = setTimeout(() => {
      metricsTimer = null;
      const job = cur && D.get(cur.kind, cur.ns, cur.name);
      if (job) refreshMetrics(job);
    }, 1000);
  }

  function detailPage(main, kind, ns, name) {
    const job = D.get(kind, ns, name);
    const key = kind + "/" + ns + "/" + name;
    if (!cur || cur.key !== key) {
      leave();
      cur = {key, kind, ns, name, series: {}, chartSig: "", podSig: "",
        chartEl: h("div", {class: "chart", id: "loss-chart", dataset: {series: "0"}}),
        logEl: h("pre", {class: "log", id: "log"}), logTitle: h("h4", {}, "Log (choose a pod)")};
    }
    D.fill(main, h("p", {}, h("a", {href: "#/jobs"}, "← all jobs")));
    if (!job) {
      D.fill(main, h("h2", {}, kind + " " + ns + "/" + name), h("p", {class: "muted"}, "not found (yet)"));
      return;
    }
    const wl = workloadOf(job), pods = podsOf(job), fp = flavorsAndPools(wl);
    const st = status(job);
    D.fill(main, h("h2", {}, kind + " ", h("b", {}, name), " ",
      h("span", {class: "v-status"}, D.badge(st, st === "Complete" ? "ok" : st === "Failed" ? "bad" : "warn"))),
    h("section", {class: "card job-detail", dataset: {job: name}},
      h("div", {class: "grid2"},
        h("div", {}, h("h4", {}, "Placement"),
          h("dl", {}, h("dt", {}, "Workload"), h("dd", {}, wl ? wl.metadata.name : "none yet"),
            h("dt", {}, "ClusterQueue"), h("dd", {}, wl ? D.workloadCQ(wl) : ""),
            h("dt", {}, "flavors"), h("dd", {class: "v-flavors"}, fp.flavors || "not admitted"),
            h("dt", {}, "pools"), h("dd", {class: "v-pools"}, fp.pools))),
        h("div", {}, h("h4", {}, "Steps"), steps(job, wl, pods)))),
    h("section", {class: "card"}, h("h4", {}, "Loss reported by each worker"), cur.chartEl),
    h("section", {class: "card"}, h("h4", {}, "Pods"), podTable(pods)),
    h("section", {class: "card"}, cur.logTitle, cur.logEl));
    const podSig = pods.map((p) => p.metadata.name + ":" + (p.status && p.status.phase)).join();
    if (podSig !== cur.podSig) {
      cur.podSig = podSig;
      refreshMetrics(job);
      if (!cur.follow && pods.length) followLog(pods[0]);
    }
    if (cur.plot) drawChart(cur);
  }

  function leave() {
    if (cur && cur.follow) cur.follow.abort();
    if (cur && cur.plot) cur.plot.destroy();
    cur = null;
  }

  D.pages.jobs = {
    render(main, route) {
      if (route.length >= 4) detailPage(main, route[1], route[2], route[3]);
      else { leave(); listPage(main); }
    },
    leave,
  };
})();
