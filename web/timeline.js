/*
 * timeline.js: the Timeline page. Every admission decision the control
 * plane recorded, newest first, from the Events about Workloads: quota
 * reserved and admitted, preempted, evicted (EvictedDueTo<Reason>; an
 * eviction by flavor fallback, EvictedDueToNoCapacity, is a fallback), requeued (the Workload's
 * Requeued condition), admission check updates and rejections. A queue
 * filter (ClusterQueue) is kept in the page's address (#/timeline?queue=Q).
 */
"use strict";

(function () {
  const h = D.h;

  function category(reason) {
    if (reason === "QuotaReserved" || reason === "Admitted") return "admitted";
    if (reason === "Preempted") return "preempted";
    /* --flavor-fallback evicts with reason NoCapacity (docs/controllers.md) */
    if (reason === "EvictedDueToNoCapacity" || /Fallback/i.test(reason)) return "fallback";
    if (reason.startsWith("EvictedDueTo")) return "evicted";
    if (reason === "Requeued") return "requeued";
    if (reason.startsWith("AdmissionCheck") || reason === "ProvisioningRequestCreated") return "check";
    if (/^(WaitingFor|Pending|Inadmissible)/.test(reason)) return "pending";
    return "other";
  }

  /* cq of the Workload an Event names (also once the Workload is gone:
   * the Event's message names the ClusterQueue for reservations) */
  function queueOf(ev) {
    const wl = D.get("Workload", ev.involvedObject.namespace || ev.metadata.namespace, ev.involvedObject.name);
    if (wl) return D.workloadCQ(wl);
    const m = (ev.message || "").match(/ClusterQueue (\S+?)[,.]?( |$)/);
    return m ? m[1] : "";
  }

  function entries() {
    const out = [];
    for (const ev of D.list("Event")) {
      if (ev.involvedObject.kind !== "Workload") continue;
      out.push({ts: ev.lastTimestamp || ev.eventTime || ev.firstTimestamp, reason: ev.reason,
        cat: category(ev.reason), wl: ev.involvedObject.name, ns: ev.involvedObject.namespace,
        queue: queueOf(ev), message: ev.message || "", rv: BigInt(ev.metadata.resourceVersion || "0")});
    }
    for (const wl of D.list("Workload")) {
      const c = D.cond(wl, "Requeued");
      if (c && c.status === "True" && c.reason !== "Pending")
        out.push({ts: c.lastTransitionTime, reason: "Requeued", cat: "requeued", wl: wl.metadata.name,
          ns: wl.metadata.namespace, queue: D.workloadCQ(wl), message: c.message || c.reason || "",
          rv: BigInt(wl.metadata.resourceVersion || "0")});
    }
    /* newest first; within one second (timestamps have no more), the
     * store's order of the writes that recorded them */
    return out.sort((a, b) => String(b.ts).localeCompare(String(a.ts)) || (b.rv > a.rv ? 1 : b.rv < a.rv ? -1 : 0));
  }

  D.pages.timeline = {
    render(main, route, rerender, params) {
      const queue = params.get("queue") || "";
      const cqs = D.list("ClusterQueue").map((q) => q.metadata.name).sort();
      const sel = h("select", {id: "queue-filter", onchange: (e) => {
        location.hash = "#/timeline" + (e.target.value ? "?queue=" + encodeURIComponent(e.target.value) : "");
      }}, h("option", {value: ""}, "all queues"), cqs.map((q) => h("option", {value: q, selected: q === queue}, q)));
      const rows = entries().filter((e) => !queue || e.queue === queue).map((e) =>
        h("tr", {class: "decision", dataset: {cat: e.cat, reason: e.reason, workload: e.wl, queue: e.queue}},
          h("td", {}, D.time(e.ts)), h("td", {}, D.badge(e.cat, "cat-" + e.cat)), h("td", {}, e.reason),
          h("td", {}, e.queue), h("td", {}, e.ns + "/" + e.wl), h("td", {class: "small"}, e.message)));
      D.fill(main, h("h2", {}, "Timeline of admission decisions"),
        h("p", {}, h("label", {}, "ClusterQueue ", sel)),
        h("section", {class: "card"}, D.table(["time", "decision", "reason", "ClusterQueue", "workload", "message"],
          rows, {class: "timeline-table"})));
    },
  };
})();
