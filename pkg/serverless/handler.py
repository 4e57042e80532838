# The Serverless lane's handler: it only hands the job to the Go worker and
# returns its output. A returned "error" makes the job FAILED while the SDK
# keeps the other fields (the result archive) beside it.
import json, os, subprocess, tempfile
import runpod  # pinned: runpod==1.12.0

def handler(job):
    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "in.json"), os.path.join(d, "out.json")
        with open(src, "w") as f:
            json.dump(job["input"], f)
        subprocess.run(["/usr/local/bin/serverless-worker", "--input", src, "--output", dst], timeout=870, check=False)
        with open(dst) as f:
            return json.load(f)

runpod.serverless.start({"handler": handler})
