"""ort_run.py JOBS.json — run ONNX models in ONNX Runtime and compare them with eager; run by
the tools venv's python (numpy and onnxruntime of tests/onnx/requirements-tools.txt, nothing
of Paddle). JOBS: {key: {"onnx", "ref" (an .npz of inputs x<i> and eager outputs out<i>),
"rtol", "atol"}}. Prints {key: None, or why it failed} as JSON."""
import json
import re
import sys

import numpy as np
import onnxruntime


def check(job):
    ref = np.load(job["ref"])
    session = onnxruntime.InferenceSession(job["onnx"], providers=["CPUExecutionProvider"])
    # Inputs by name (InputSpec's x<i>): a converter may drop an input no output reads.
    got = session.run(None, {i.name: ref[i.name] for i in session.get_inputs()})
    want = [ref[f"out{i}"] for i in range(sum(k.startswith("out") for k in ref.files))]
    if len(got) != len(want):
        return f"{len(got)} outputs, eager has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        # paddle2onnx 1.x gives a 0-D output shape [1]: the values count, not that convention.
        if g.size != w.size:
            return f"output {i} has shape {list(g.shape)}, eager's {list(w.shape)}"
        if not np.issubdtype(w.dtype, np.floating):
            if not np.array_equal(g.reshape(w.shape), w):
                return f"output {i} ({w.dtype}) differs from eager"
        elif not np.allclose(g.reshape(w.shape), w, rtol=job["rtol"], atol=job["atol"]):
            diff = np.abs(g.reshape(w.shape).astype("float64") - w).max()
            return f"output {i} differs from eager (max abs diff {diff:.3g})"
    return None


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        jobs = json.load(f)
    results = {}
    for key, job in jobs.items():
        try:
            results[key] = check(job)
        except Exception as exc:  # noqa: BLE001 - every failure is a result
            # ONNX Runtime's message after the model's path, which says what is wrong where
            text = re.sub(r"^.*?Load model from \S+ failed:", "", str(exc).strip().splitlines()[0])
            results[key] = f"{type(exc).__name__}: {text[:300]}"
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
