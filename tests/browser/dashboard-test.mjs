// dashboard-test.mjs: drives Debian's chromium (playwright-core, no
// downloaded browser) through the dashboard while tests/e2e/t6000-dashboard.sh
// runs the seed's two-job scenario plus a small queue with one job held and
// one pending behind it. Every check compares what a page shows with what
// the API answers at that moment (polling both with a timeout, never a
// fixed sleep). Output, one line each, for the shell to turn into TAP:
//   PASS<TAB>name | FAIL<TAB>name<TAB>detail | DIAG<TAB>text
// Environment: DASH_URL (…/ui/), API_URL, HOLD_MARK (hold-N runs until
// HOLD_MARK.hold-N exists), ARTIFACTS (screenshots go there), CHROMIUM (default
// /usr/bin/chromium), T_TIMEOUT (seconds per wait, default 30).
import { chromium } from "playwright-core";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const DASH = process.env.DASH_URL;
const API = process.env.API_URL;
// the API's port needs the admin token (its CA comes through NODE_EXTRA_CA_CERTS);
// the dashboard's own port needs none (read-only, loopback, docs/dashboard.md)
const AUTH = process.env.API_TOKEN ? { Authorization: `Bearer ${process.env.API_TOKEN}` } : {};
const ART = process.env.ARTIFACTS;
const TIMEOUT_MS = 1000 * Number(process.env.T_TIMEOUT || 30);
let failed = 0;
const T0 = Date.now();

const pass = (n) => console.log(`PASS\t${n}`);
const fail = (n, d) => { failed++; console.log(`FAIL\t${n}\t${String(d).replace(/\s+/g, " ")}`); };
const diag = (t) => console.log(`DIAG\t${t}`);
const check = (cond, n, d) => (cond ? pass(n) : fail(n, d || "false"));

async function api(p) {
  const r = await fetch(API + p, { headers: { Accept: "application/json", ...AUTH } });
  if (!r.ok) throw new Error(`${p}: HTTP ${r.status}`);
  return r.json();
}

/* Poll fn until it returns {ok: true}; the last answer explains a failure. */
async function until(name, fn, ms = TIMEOUT_MS) {
  const end = Date.now() + ms;
  let last = { ok: false, why: "never ran" };
  for (;;) {
    try { last = await fn(); } catch (e) { last = { ok: false, why: String(e) }; }
    if (last.ok) { pass(name); diag(`  (${((Date.now() - T0) / 1000).toFixed(1)}s)`); return last; }
    if (Date.now() > end) { fail(name, last.why); return last; }
    await new Promise((r) => setTimeout(r, 150));
  }
}

const cond = (o, t) => ((o.status && o.status.conditions) || []).find((c) => c.type === t);

async function main() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "cueue-chromium-"));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1280, height: 860 },
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const page = ctx.pages()[0] || (await ctx.newPage());
  const consoleErrors = [];
  page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  let loads = 0;
  page.on("load", () => loads++);
  const requests = [];
  page.on("request", (r) => requests.push(r.url()));

  diag(`browser: ${ctx.browser() ? ctx.browser().version() : "chromium"}`);
  await page.goto(DASH + "#/capacity");
  await page.evaluate(() => { window.__noReload = 1; });
  await until("the page connects to /ui/events and is live", async () => {
    const s = await page.evaluate(() => [window.cueueDash && window.cueueDash.synced, document.getElementById("conn").dataset.state]);
    return { ok: s[0] === true && s[1] === "live", why: JSON.stringify(s) };
  });
  const loadsBase = loads;

  // ---- Capacity: pools, the ProvisioningRequest and its conditions ----
  await until("Capacity: the node pools with machine type, topology, queued provisioning and flex-start", async () => {
    const rows = await page.$$eval("tr.pool", (trs) => trs.map((t) => [t.dataset.pool, ...Array.from(t.cells, (c) => c.textContent)]));
    const dws = rows.find((r) => r[0] === "dws-pool"), od = rows.find((r) => r[0] === "on-demand-pool");
    const ok = !!dws && !!od && dws[2] === "ct6e-standard-4t" && dws[3] === "4x4" && dws[5] === "yes" && dws[6] === "yes" &&
      od[5] === "no" && od[6] === "no" && dws[4] === "0 – 4";
    return { ok, why: JSON.stringify(rows) };
  });
  let prName = "";
  await until("Capacity: the ProvisioningRequest of job 2 is shown with the API's conditions", async () => {
    const prs = (await api("/apis/autoscaling.x-k8s.io/v1/provisioningrequests")).items;
    if (!prs.length) return { ok: false, why: "no ProvisioningRequest in the API yet" };
    const want = prs.map((p) => [p.metadata.name, ((p.status && p.status.conditions) || []).map((c) => c.type + "=" + c.status).join(",")]);
    const got = await page.$$eval("tr.provreq", (trs) => trs.map((t) => [t.dataset.name,
      Array.from(t.querySelectorAll(".prcond"), (c) => c.dataset.type + "=" + c.dataset.status).join(",")]));
    prName = want[0][0];
    return { ok: JSON.stringify(got) === JSON.stringify(want) && /Accepted=True/.test(want[0][1]), why: `page ${JSON.stringify(got)} api ${JSON.stringify(want)}` };
  });
  await until("Capacity: it turns Provisioned=True on the page without a reload", async () => {
    const got = await page.$$eval("tr.provreq .prcond", (cs) => cs.map((c) => c.dataset.type + "=" + c.dataset.status));
    return { ok: got.includes("Provisioned=True"), why: JSON.stringify(got) };
  });
  await until("Capacity: dws-pool's nodes with labels, taints and allocatable, and the pods on them", async () => {
    const rows = await page.$$eval("tr.node[data-pool='dws-pool']", (trs) => trs.map((t) => t.textContent));
    const ok = rows.length === 4 && rows.every((r) => r.includes("cloud.google.com/gke-queued=true:NoSchedule") &&
      r.includes("google.com/tpu=4") && /train-tpu-v6e-dws-2/.test(r));
    return { ok, why: `${rows.length} rows: ${rows[0] || ""}` };
  });
  await page.screenshot({ path: path.join(ART, "capacity.png") });

  // the Queues page while both seed jobs hold quota (its screenshot)
  await page.click("nav a[data-page=queues]");
  await until("Queues: while the seed jobs run, cluster-queue shows quota in use and hold-2 pending", async () => {
    const r = await page.evaluate(() => [
      Array.from(document.querySelectorAll(".cq[data-cq='cluster-queue'] tr.admitted-wl"), (t) => t.dataset.name).length,
      document.querySelectorAll(".cq[data-cq='small-queue'] tr.pending-wl").length]);
    return { ok: r[0] === 2 && r[1] === 1, why: JSON.stringify(r) };
  });
  await page.screenshot({ path: path.join(ART, "queues.png") });

  // ---- Jobs: job 1 on on-demand, job 2 on dws ----
  await page.click("nav a[data-page=jobs]");
  await until("Jobs: job 1 on flavor on-demand (pool on-demand-pool), job 2 on dws (pool dws-pool)", async () => {
    const rows = Object.fromEntries(await page.$$eval("tr.job", (trs) => trs.map((t) =>
      [t.dataset.job, [t.querySelector(".v-flavors").textContent, t.querySelector(".v-pools").textContent]])));
    const j1 = rows["train-tpu-v6e-dws-1"], j2 = rows["train-tpu-v6e-dws-2"];
    return { ok: !!j1 && !!j2 && j1[0] === "main: on-demand" && j1[1] === "on-demand-pool" && j2[0] === "main: dws" && j2[1] === "dws-pool",
      why: JSON.stringify(rows) };
  });
  await page.click("tr.job[data-job='train-tpu-v6e-dws-2'] a");
  await until("Jobs: job 2's steps: created, quota reserved, check dws-prov Ready, admitted, running", async () => {
    const steps = await page.$$eval("li.step", (ls) => ls.map((l) => l.dataset.step));
    const want = ["created", "quota reserved", "admission check dws-prov: Ready", "admitted", "running"];
    return { ok: want.every((s, i) => steps[i] === s), why: JSON.stringify(steps) };
  });
  await until("Jobs: job 2 finishes on the page (status Complete) without a reload", async () => {
    const st = await page.$eval(".v-status", (e) => e.textContent);
    return { ok: st === "Complete", why: st };
  }, 3 * TIMEOUT_MS);
  const workers = (await api("/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3Dtrain-tpu-v6e-dws-2")).items.length;
  await until(`Jobs: the loss plot has one series per worker (${workers})`, async () => {
    const r = await page.evaluate(() => {
      const el = document.getElementById("loss-chart");
      return [el && el.dataset.series, el ? el.querySelectorAll(".u-legend .u-series").length - 1 : -1,
        el ? el.querySelectorAll("canvas").length : 0];
    });
    return { ok: workers === 4 && r[0] === String(workers) && r[1] === workers && r[2] > 0, why: JSON.stringify(r) };
  });
  await until("Jobs: the log of worker 0 is followed and shows the training", async () => {
    const t = await page.$eval("#log", (e) => e.textContent);
    return { ok: /Epoch 0: Loss/.test(t) && /Training Complete!/.test(t), why: t.slice(-200) };
  });
  await page.screenshot({ path: path.join(ART, "jobs.png"), fullPage: false });

  // ---- Queues: bars equal the API's numbers, pending positions and estimates ----
  await page.click("nav a[data-page=queues]");
  await until("Queues: every flavor/resource row shows the API's nominal, reservation, usage and borrowed", async () => {
    const cqs = (await api("/apis/kueue.x-k8s.io/v1beta1/clusterqueues")).items;
    const want = [];
    for (const cq of cqs) {
      const st = {};
      for (const f of["flavorsUsage", "flavorsReservation"])
        for (const fl of (cq.status && cq.status[f]) || []) for (const r of fl.resources) st[f + fl.name + r.name] = r;
      for (const g of cq.spec.resourceGroups) for (const fl of g.flavors) for (const r of fl.resources)
        want.push([cq.metadata.name, fl.name, r.name, String(r.nominalQuota),
          String((st["flavorsReservation" + fl.name + r.name] || {}).total ?? "0"),
          String((st["flavorsUsage" + fl.name + r.name] || {}).total ?? "0"),
          String((st["flavorsReservation" + fl.name + r.name] || {}).borrowed ?? "0")]);
    }
    const got = await page.$$eval("tr.quota", (trs) => trs.map((t) => [t.dataset.cq, t.dataset.flavor, t.dataset.resource,
      ...["nominal", "reserved", "usage", "borrowed"].map((c) => t.querySelector(".v-" + c).textContent)]));
    return { ok: want.length > 0 && JSON.stringify(got) === JSON.stringify(want), why: `page ${JSON.stringify(got)} api ${JSON.stringify(want)}` };
  });
  await until("Queues: small-queue's cpu bar is drawn full (1 of 1 reserved and in use)", async () => {
    const r = await page.$$eval("tr.quota[data-cq='small-queue'][data-resource='cpu'] .bar", (bs) => bs.map((b) =>
      [b.querySelector(".bar-reserved").style.width, b.querySelector(".bar-used").style.width]));
    return { ok: r.length === 1 && parseFloat(r[0][0]) === 100 && parseFloat(r[0][1]) === 100, why: JSON.stringify(r) };
  });
  const vis = await until("Queues: small-queue's pending workloads in the API's order, positions and estimated admission", async () => {
    const items = (await api("/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/small-queue/pendingworkloads")).items;
    const want = items.map((i) => [i.metadata.name, String(i.positionInClusterQueue), i.estimatedAdmissionTime || "", i.reason || ""]);
    const got = await page.$$eval(".cq[data-cq='small-queue'] tr.pending-wl", (trs) => trs.map((t) =>
      [t.dataset.name, t.querySelector(".v-position").textContent, t.querySelector(".v-eta").dataset.eta,
        t.querySelector(".v-reason").firstChild ? t.querySelector(".v-reason").firstChild.textContent : ""]));
    return { ok: want.length === 1 && want[0][2] !== "" && JSON.stringify(got) === JSON.stringify(want),
      why: `page ${JSON.stringify(got)} api ${JSON.stringify(want)}`, want };
  });
  if (vis.want) diag(`pending in small-queue: ${JSON.stringify(vis.want)}`);
  await until("Queues: the LocalQueues of namespace default with the API's counts", async () => {
    const lqs = (await api("/apis/kueue.x-k8s.io/v1beta1/localqueues")).items;
    const want = lqs.map((l) => [l.metadata.name, String((l.status && l.status.pendingWorkloads) ?? 0), String((l.status && l.status.admittedWorkloads) ?? 0)]).sort();
    const got = (await page.$$eval("tr.lq", (trs) => trs.map((t) => [t.dataset.name, t.querySelector(".v-pending").textContent,
      t.querySelector(".v-admitted").textContent]))).sort();
    return { ok: want.length === 2 && JSON.stringify(got) === JSON.stringify(want), why: `page ${JSON.stringify(got)} api ${JSON.stringify(want)}` };
  });

  // ---- live: the held job ends, the pending one is admitted, no reload ----
  fs.writeFileSync(process.env.HOLD_MARK + ".hold-1", "go\n");
  await until("Queues: hold-2 leaves the pending list and shows as admitted, without a reload", async () => {
    const r = await page.evaluate(() => [
      document.querySelectorAll(".cq[data-cq='small-queue'] tr.pending-wl").length,
      Array.from(document.querySelectorAll(".cq[data-cq='small-queue'] tr.admitted-wl"), (t) => t.dataset.name)]);
    return { ok: r[0] === 0 && r[1].length === 1 && /hold-2/.test(r[1][0]), why: JSON.stringify(r) };
  }, 2 * TIMEOUT_MS);

  // ---- hold-3, of priority class high, preempts hold-2 ----
  const hold3 = {apiVersion: "batch/v1", kind: "Job",
    metadata: {name: "hold-3", labels: {"kueue.x-k8s.io/queue-name": "small", "kueue.x-k8s.io/priority-class": "high"}},
    spec: {backoffLimit: 0, template: {spec: {restartPolicy: "Never", containers: [{name: "main", image: "busybox",
      command: ["bash", "-c", `until [ -e ${process.env.HOLD_MARK}.hold-3 ]; do sleep 0.2; done`],
      resources: {requests: {cpu: "1"}}}]}}}};
  const created = await fetch(API + "/apis/batch/v1/namespaces/default/jobs", {method: "POST",
    headers: {"Content-Type": "application/json", ...AUTH}, body: JSON.stringify(hold3)});
  check(created.status === 201, "hold-3 (priority class high) submitted to small-queue", `HTTP ${created.status}`);
  await until("Queues: hold-3 takes the quota and hold-2 is pending again, without a reload", async () => {
    const r = await page.evaluate(() => [
      Array.from(document.querySelectorAll(".cq[data-cq='small-queue'] tr.pending-wl"), (t) => t.dataset.name),
      Array.from(document.querySelectorAll(".cq[data-cq='small-queue'] tr.admitted-wl"), (t) => t.dataset.name)]);
    return { ok: r[0].length === 1 && /hold-2/.test(r[0][0]) && r[1].length === 1 && /hold-3/.test(r[1][0]), why: JSON.stringify(r) };
  }, 2 * TIMEOUT_MS);

  // ---- Timeline ----
  await page.click("nav a[data-page=timeline]");
  await until("Timeline: hold-2 shows as preempted, evicted and requeued, as the API's Events and conditions say", async () => {
    const evs = (await api("/api/v1/namespaces/default/events")).items
      .filter((e) => e.involvedObject.kind === "Workload" && /hold-2/.test(e.involvedObject.name)).map((e) => e.reason);
    const rows = await page.$$eval("tr.decision", (trs) => trs.filter((t) => /hold-2/.test(t.dataset.workload))
      .map((t) => t.dataset.cat + ":" + t.dataset.reason));
    const ok = evs.includes("Preempted") && rows.includes("preempted:Preempted") &&
      rows.includes("evicted:EvictedDueToPreempted") && rows.some((r) => r.startsWith("requeued:"));
    return { ok, why: `page ${JSON.stringify(rows)} api events ${JSON.stringify(evs)}` };
  });
  await until("Timeline: the admissions of both seed jobs and both small-queue jobs", async () => {
    const rows = await page.$$eval("tr.decision", (trs) => trs.map((t) => [t.dataset.cat, t.dataset.reason, t.dataset.workload, t.dataset.queue]));
    const adm = rows.filter((r) => r[1] === "Admitted");
    const ok = ["train-tpu-v6e-dws-1", "train-tpu-v6e-dws-2", "hold-1", "hold-2"].every((j) => adm.some((r) => r[2].includes(j)));
    return { ok, why: JSON.stringify(adm) };
  });
  await page.selectOption("#queue-filter", "small-queue");
  await until("Timeline: filtered by queue small-queue, only its decisions remain", async () => {
    const rows = await page.$$eval("tr.decision", (trs) => trs.map((t) => t.dataset.queue));
    return { ok: rows.length > 0 && rows.every((q) => q === "small-queue"), why: JSON.stringify(rows) };
  });
  await page.screenshot({ path: path.join(ART, "timeline.png") });

  // ---- whole-session checks ----
  const still = await page.evaluate(() => window.__noReload);
  check(still === 1 && loads === loadsBase, "no page reload happened during the whole scenario (only hash changes)",
    `marker ${still}, loads ${loads - loadsBase}`);
  const external = requests.filter((u) => !u.startsWith(new URL(DASH).origin) && !u.startsWith("data:"));
  check(external.length === 0, "nothing fetched from another origin (no CDN)", external.join(" "));
  const errs = consoleErrors.concat(await page.evaluate(() => window.cueueDash.errors));
  check(errs.length === 0, "no console errors, no page errors", errs.join(" | "));
  for (const f of ["capacity", "jobs", "queues", "timeline"]) {
    const file = path.join(ART, f + ".png");
    const b64 = fs.readFileSync(file).toString("base64");
    // count distinct colours in the screenshot, decoded by the browser itself
    const colours = await page.evaluate(async (src) => {
      const img = new Image();
      img.src = src;
      await img.decode();
      const c = document.createElement("canvas");
      c.width = img.width; c.height = img.height;
      const g = c.getContext("2d");
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length && seen.size < 1000; i += 4 * 7) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return seen.size;
    }, "data:image/png;base64," + b64);
    check(colours >= 20, `screenshot ${f}.png saved and not blank (${colours} colours)`, `${colours} colours`);
  }
  diag(`ProvisioningRequest: ${prName}; screenshots in ${ART}`);
  await ctx.close();
  fs.rmSync(profile, { recursive: true, force: true });
}

main().then(() => process.exit(failed ? 1 : 0), (e) => {
  fail("the browser test ran to its end", e && e.stack || e);
  process.exit(1);
});
