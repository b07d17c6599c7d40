"""CPU per 32 ms window of silero VAD (the vendored vendor/models/silero_vad.onnx) by batch size, on
onnxruntime with one thread: what running many sessions' VAD windows as one batched call would save
(issue 31). Optional, not part of CI; needs `pip install onnxruntime numpy`.

    python3 scripts/python/silero_batch_cost.py [--model vendor/models/silero_vad.onnx] [--batches 1,2,8,32,100]
"""
import argparse
import time

import numpy as np
import onnxruntime as ort


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="vendor/models/silero_vad.onnx")
    parser.add_argument("--batches", default="1,2,8,32,100")
    args = parser.parse_args()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(args.model, options)
    rate = np.array(16000, dtype=np.int64)
    noise = np.random.default_rng(0)
    for batch in (int(b) for b in args.batches.split(",")):
        state = np.zeros((2, batch, 128), dtype=np.float32)
        # 512 new samples and the 64 of context the model takes with them.
        window = (noise.standard_normal((batch, 576)) * 0.1).astype(np.float32)
        for _ in range(5):
            session.run(None, {"input": window, "state": state, "sr": rate})
        runs = max(20, 2000 // batch)
        started = time.process_time()
        for _ in range(runs):
            _, state = session.run(None, {"input": window, "state": state, "sr": rate})
        per_window = (time.process_time() - started) / (runs * batch)
        print(f"batch {batch:4d}: {per_window * 1e6:7.1f} us CPU per 32 ms window = {per_window / 0.032 * 1000:.2f} ms per audio second")


if __name__ == "__main__":
    main()
