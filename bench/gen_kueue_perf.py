#!/usr/bin/env python3
"""Generate Kueue's scheduler performance scenarios as `cueue sim` scenarios.

Kueue's harness (test/performance/scheduler) builds, per cohort set, `count`
cohorts named <class>-<i>; per queue set, `count` ClusterQueues named
<class>-<setIdx>-<i>-<cohort>, each with one resource group {flavor "rf": cpu
nominalQuota, borrowingLimit} and the configured preemption, plus a Namespace
and a LocalQueue named like the ClusterQueue. Each workload set then creates
`count` bare Workloads, one every creationIntervalMs (the first one interval
after the start), named <class>-<setIdx>-<seq>-<templateIdx>, one pod set
"main" of one pod requesting `request` cpu, with spec.priority and the labels
kueue.x-k8s.io/performance-scheduler-running-ms and
kueue.x-k8s.io/performance-scheduler-class. The runner finishes an admitted
Workload runtimeMs after its admission; `cueue sim` plays that role for bare
Workloads, reading the same label.

Usage: gen_kueue_perf.py baseline|large [> scenario.yaml]
Only the Python standard library is used.
"""
import re
import sys

CLASS_LABEL = "kueue.x-k8s.io/performance-scheduler-class"
RUNTIME_LABEL = "kueue.x-k8s.io/performance-scheduler-running-ms"

# The scenarios as shared/spec/kueue.md section 8.2 describes them.
SCENARIOS = {
    "baseline": {
        "cohorts": 5,
        "queues": 6,
        "sets": [  # (class, count, interval ms, runtime ms, priority, cpu)
            ("small", 350, 100, 200, 50, "1"),
            ("medium", 100, 500, 500, 100, "5"),
            ("large", 50, 1200, 1000, 200, "20"),
        ],
    },
    "large": {
        "cohorts": 10,
        "queues": 100,
        "sets": [
            ("small", 35, 60, 150, 50, "1"),
            ("medium", 11, 300, 350, 100, "5"),
            ("large", 4, 700, 700, 200, "20"),
        ],
    },
}
NOMINAL = "20"
BORROWING_LIMIT = "100"


PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")
RESERVED = {"true", "false", "yes", "no", "on", "off", "y", "n", "null"}


def scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    s = str(v)
    if PLAIN.match(s) and s.lower() not in RESERVED:
        return s
    # quote anything YAML could read as another type or that has specials
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def emit(v, indent, out):
    """Block-style YAML for dicts, lists and scalars."""
    pad = "  " * indent
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, (dict, list)) and x:
                out.append(f"{pad}{scalar(k)}:")
                emit(x, indent + 1, out)
            else:
                out.append(f"{pad}{scalar(k)}: {flow(x)}")
    elif isinstance(v, list):
        for x in v:
            if isinstance(x, (dict, list)) and x:
                sub = []
                emit(x, indent + 1, sub)
                first = sub[0].lstrip()
                out.append(f"{pad}- {first}")
                out.extend(sub[1:])
            else:
                out.append(f"{pad}- {flow(x)}")
    else:
        out.append(pad + scalar(v))


def flow(v):
    if isinstance(v, dict):
        return "{" + ", ".join(f"{scalar(k)}: {flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(flow(x) for x in v) + "]"
    return scalar(v)


def cluster_queue(name, cohort):
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": name, "labels": {CLASS_LABEL: "cq"}},
        "spec": {
            "cohort": cohort,
            "namespaceSelector": {},
            "resourceGroups": [{
                "coveredResources": ["cpu"],
                "flavors": [{
                    "name": "rf",
                    "resources": [{"name": "cpu", "nominalQuota": NOMINAL,
                                   "borrowingLimit": BORROWING_LIMIT}],
                }],
            }],
            "preemption": {"reclaimWithinCohort": "Any",
                           "withinClusterQueue": "LowerPriority"},
        },
    }


def workload(cls, set_idx, runtime_ms, priority, cpu, ns):
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {
            "name": f"{cls}-{set_idx}-${{i}}-0",
            "namespace": ns,
            "labels": {RUNTIME_LABEL: str(runtime_ms), CLASS_LABEL: cls},
        },
        "spec": {
            "queueName": ns,
            "priority": priority,
            "podSets": [{
                "name": "main",
                "count": 1,
                "template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "pause",
                                    "resources": {"requests": {"cpu": cpu}}}],
                }},
            }],
        },
    }


def scenario(name):
    cfg = SCENARIOS[name]
    objects = [{"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
                "metadata": {"name": "rf"}}]
    actions = []
    for c in range(cfg["cohorts"]):
        cohort = f"cohort-{c}"
        for q in range(cfg["queues"]):
            cq = f"cq-0-{q}-{cohort}"
            objects.append(cluster_queue(cq, cohort))
            objects.append({"apiVersion": "v1", "kind": "Namespace",
                            "metadata": {"name": cq}})
            objects.append({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                            "metadata": {"name": cq, "namespace": cq},
                            "spec": {"clusterQueue": cq}})
            for set_idx, (cls, count, every, runtime, prio, cpu) in enumerate(cfg["sets"]):
                actions.append({
                    "at": f"{every}ms",
                    "repeat": {"count": count, "every": f"{every}ms"},
                    "apply": workload(cls, set_idx, runtime, prio, cpu, cq),
                })
    scen = {
        "apiVersion": "cueue.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": f"kueue-perf-{name}"},
        "spec": {
            "seed": 1,
            "classLabel": CLASS_LABEL,
            # minimalkueue runs without waitForPodsReady
            "controller": {"waitForPodsReady": {"enable": False}},
            "actions": actions,
        },
    }
    return scen, objects


def main(argv):
    if len(argv) != 2 or argv[1] not in SCENARIOS:
        sys.stderr.write("usage: gen_kueue_perf.py baseline|large\n")
        return 2
    scen, objects = scenario(argv[1])
    actions = scen["spec"].pop("actions")
    out = [f"# Kueue scheduler performance scenario '{argv[1]}', generated by "
           "bench/gen_kueue_perf.py"]
    emit(scen, 0, out)
    # one action per line keeps the Scenario document small
    out.append("  actions:")
    out.extend("  - " + flow(a) for a in actions)
    # the objects, one YAML document each, created at time 0
    for o in objects:
        out.append("---")
        emit(o, 0, out)
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
