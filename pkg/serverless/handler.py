# The Serverless lane's handler: it only hands the job to the Go worker and
# returns its output. A returned "error" makes the job FAILED while the SDK
# keeps the other fields (the result archive) beside it.
import json, os, subprocess, tempfile
import runpod  # pinned: runpod==1.12.0

WORKER = os.environ.get("RPG_WORKER_BIN", "/usr/local/bin/serverless-worker")

# What the Go worker sees of this process's environment: the paths and the
# CUDA driver's and container toolkit's settings. Never what RunPod injects
# (RUNPOD_*: its AI API key, the job webhooks) nor the bootstrap's RPG_* values.
KEEP = ("PATH", "LD_LIBRARY_PATH", "HOME", "TMPDIR")
KEEP_PREFIXES = ("CUDA_", "NVIDIA_", "SIM_CUDA_")


def worker_env():
    return {k: v for k, v in os.environ.items() if k in KEEP or k.startswith(KEEP_PREFIXES)}


def handler(job):
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in.json"), os.path.join(d, "out.json")
        with open(src, "w") as f:
            json.dump(job["input"], f)
        try:
            subprocess.run([WORKER, "--input", src, "--output", dst], timeout=870, check=False, env=worker_env())
            with open(dst) as f:
                return json.load(f)
        except (OSError, ValueError, subprocess.TimeoutExpired) as e:
            return {"error": "handler: the worker returned no output: %s" % type(e).__name__, "cuda_executed": False}


if __name__ == "__main__":
    runpod.serverless.start({"handler": handler})
