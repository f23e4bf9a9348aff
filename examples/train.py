"""Linear regression training, the seed's train.py without Ray.

Each worker of a multi-host job runs this script (cueue starts one process
per pod). Like the seed, every worker trains the same small model: x is
1000x10 normal, w_true 10x1 normal, y = x.w; gradient descent from zero with
learning rate 0.1 for 50 epochs, reporting {"loss", "epoch"} every 10 epochs.

It uses JAX when it is installed and numpy otherwise. Metrics are reported
the way Ray Train's train.report() would: one JSON object per line appended
to $CUEUE_METRICS_FILE, which cueue keeps per worker (`cueue describe job`).
"""
import json
import os
import sys
import time

# Seconds to pause after each epoch, so the toy training can be watched
# (the demo's job sets it; 0 by default).
EPOCH_SECONDS = float(os.environ.get("EPOCH_SECONDS", "0"))


def report(metrics):
    """Record a metrics dict for this worker (cueue's counterpart of train.report)."""
    path = os.environ.get("CUEUE_METRICS_FILE")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(metrics) + "\n")


def train_numpy():
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((1000, 10))
    w_true = rng.standard_normal((10, 1))
    y = x @ w_true
    w = np.zeros((10, 1))
    lr = 0.1
    for epoch in range(50):
        err = x @ w - y
        loss = float(np.mean(err ** 2))
        grad = 2.0 * x.T @ err / err.size
        w = w - lr * grad
        if epoch % 10 == 0:
            report({"loss": loss, "epoch": epoch})
            print(f"Epoch {epoch}: Loss {loss:.4f}", flush=True)
        time.sleep(EPOCH_SECONDS)


def train_jax():
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(0)
    x = jax.random.normal(key, (1000, 10))
    w_true = jax.random.normal(key, (10, 1))
    y = jnp.dot(x, w_true)
    w = jnp.zeros((10, 1))
    lr = 0.1

    @jax.jit
    def update(w, x, y):
        loss = jnp.mean((jnp.dot(x, w) - y) ** 2)
        grad = jax.grad(lambda w: jnp.mean((jnp.dot(x, w) - y) ** 2))(w)
        return w - lr * grad, loss

    for epoch in range(50):
        w, loss = update(w, x, y)
        if epoch % 10 == 0:
            report({"loss": loss.item(), "epoch": epoch})
            print(f"Epoch {epoch}: Loss {loss:.4f}", flush=True)
        time.sleep(EPOCH_SECONDS)


def main():
    rank = os.environ.get("TPU_WORKER_ID", os.environ.get("RANK", "0"))
    hosts = os.environ.get("TPU_WORKER_HOSTNAMES", "localhost")
    print(f"Worker {rank} of {len(hosts.split(','))} "
          f"(topology {os.environ.get('TPU_TOPOLOGY', '?')}, "
          f"accelerator {os.environ.get('TPU_ACCELERATOR_TYPE', '?')})", flush=True)
    try:
        import jax  # noqa: F401
        backend = train_jax
        print(f"Local Devices: {jax.local_devices()}", flush=True)
    except ImportError:
        backend = train_numpy
        print("Local Devices: [cpu (numpy)]", flush=True)
    print("Starting training...", flush=True)
    backend()
    print("Training Complete!", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
