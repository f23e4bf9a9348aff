/*
 * capacity.js: the Capacity page. Node pools (machine type, TPU topology,
 * autoscaling min/max, queued provisioning, flex-start, provider capacity,
 * node count), their nodes with labels, taints, allocatable and the pods
 * bound to them; ProvisioningRequests with every condition; a timeline of
 * scale-ups and scale-downs from the Events the autoscaler records
 * (ScaledUpGroup, ScaleDown, TriggeredScaleUp, FailedScaleUp).
 */
"use strict";

(function () {
  const h = D.h;
  const SCALE_REASONS = new Set(["ScaledUpGroup", "ScaleDown", "TriggeredScaleUp", "FailedScaleUp",
    "NotTriggerScaleUp", "CapacityRevoked"]);

  function poolOf(node) {
    return (node.metadata.labels || {})["cloud.google.com/gke-nodepool"] || "";
  }

  function provider(p) {
    const c = p.spec.capacity;
    if (!c) return "local";
    if (c.mode === "Delayed") return "local, capacity after " + c.delaySeconds + "s";
    return "local, " + (c.mode || "").toLowerCase();
  }

  function poolTable() {
    const pools = D.list("NodePool").sort(D.byName);
    const rows = pools.map((p) => {
      const s = p.spec || {}, a = s.autoscaling || {};
      return h("tr", {class: "pool", dataset: {pool: p.metadata.name}},
        h("td", {}, h("b", {}, p.metadata.name)),
        h("td", {}, (s.config && s.config.machineType) || ""),
        h("td", {}, (s.placementPolicy && s.placementPolicy.tpuTopology) || ""),
        h("td", {}, a.enabled ? (a.minNodeCount ?? 0) + " – " + (a.maxNodeCount ?? 0) : "fixed " + (s.initialNodeCount ?? 0)),
        h("td", {class: "v-queued"}, s.queuedProvisioning && s.queuedProvisioning.enabled ? "yes" : "no"),
        h("td", {class: "v-flex"}, s.config && s.config.flexStart ? "yes" : "no"),
        h("td", {}, provider(p)),
        h("td", {class: "num v-nodes"}, String((p.status && p.status.nodeCount) ?? 0)));
    });
    return D.table(["pool", "machine type", "topology", "min – max", "queued provisioning", "flex-start",
      "provider", "nodes"], rows, {class: "pool-table"});
  }

  function kv(obj) {
    return Object.entries(obj || {}).map(([k, v]) => h("div", {class: "kv"}, k + "=" + v));
  }

  function nodeTable() {
    const pods = D.list("Pod");
    const nodes = D.list("Node").sort((a, b) => (poolOf(a) + a.metadata.name).localeCompare(poolOf(b) + b.metadata.name));
    const rows = nodes.map((n) => {
      const on = pods.filter((p) => p.spec && p.spec.nodeName === n.metadata.name &&
        !["Succeeded", "Failed"].includes(p.status && p.status.phase));
      return h("tr", {class: "node", dataset: {node: n.metadata.name, pool: poolOf(n)}},
        h("td", {}, poolOf(n)), h("td", {}, n.metadata.name),
        h("td", {class: "small"}, kv(n.metadata.labels)),
        h("td", {class: "small"}, ((n.spec && n.spec.taints) || []).map((t) =>
          h("div", {class: "kv"}, t.key + (t.value ? "=" + t.value : "") + ":" + t.effect))),
        h("td", {class: "small"}, kv(n.status && n.status.allocatable)),
        h("td", {class: "small v-pods"}, on.map((p) => h("div", {}, p.metadata.namespace + "/" + p.metadata.name))));
    });
    return D.table(["pool", "node", "labels", "taints", "allocatable", "pods running"], rows, {class: "node-table"});
  }

  function prTable() {
    const prs = D.list("ProvisioningRequest").sort(D.byName);
    const rows = prs.map((pr) => h("tr", {class: "provreq", dataset: {name: pr.metadata.name}},
      h("td", {}, pr.metadata.namespace + "/" + pr.metadata.name),
      h("td", {}, pr.spec.provisioningClassName || ""),
      h("td", {class: "num"}, String((pr.spec.podSets || []).reduce((n, p) => n + (p.count || 0), 0))),
      h("td", {class: "v-conditions"}, ((pr.status && pr.status.conditions) || []).map((c) =>
        h("div", {class: "prcond", dataset: {type: c.type, status: c.status}},
          D.badge(c.type + "=" + c.status, c.status === "True" ? "ok" : "muted"), " ", c.reason || "",
          h("span", {class: "muted small"}, " " + D.time(c.lastTransitionTime) + " " + (c.message || "")))))));
    return D.table(["ProvisioningRequest", "class", "pods", "conditions"], rows, {class: "pr-table"});
  }

  function scaleTimeline() {
    const evs = D.list("Event").filter((e) => SCALE_REASONS.has(e.reason))
      .sort((a, b) => String(a.lastTimestamp || a.eventTime).localeCompare(String(b.lastTimestamp || b.eventTime)));
    const rows = evs.map((e) => h("tr", {class: "scale-ev", dataset: {reason: e.reason}},
      h("td", {}, D.time(e.lastTimestamp || e.eventTime || e.firstTimestamp)),
      h("td", {}, D.badge(e.reason, /Fail|NotTrigger|Revoked/.test(e.reason) ? "bad" : e.reason === "ScaleDown" ? "muted" : "ok")),
      h("td", {}, e.involvedObject.kind + " " + e.involvedObject.name), h("td", {}, e.message || "")));
    return D.table(["time", "what", "object", "message"], rows, {class: "scale-table"});
  }

  D.pages.capacity = {
    render(main) {
      D.fill(main, h("h2", {}, "Capacity"),
        h("section", {class: "card"}, h("h3", {}, "Node pools"), poolTable()),
        h("section", {class: "card"}, h("h3", {}, "ProvisioningRequests"), prTable()),
        h("section", {class: "card"}, h("h3", {}, "Scale-up and scale-down"), scaleTimeline()),
        h("section", {class: "card"}, h("h3", {}, "Nodes"), nodeTable()));
    },
  };
})();
