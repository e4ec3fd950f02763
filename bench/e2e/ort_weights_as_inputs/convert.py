#!/usr/bin/env python3
"""The peers' ONNX mlp_b32 with its weights as graph inputs instead of initializers.

ONNX Runtime packs an initializer's weights once, when the session is made; the JAX program
xlite runs takes its weights as parameters, fresh on every call. Fed as inputs, ORT solves that
same problem. Usage: convert.py PEERS_RUN OUT_DIR (PEERS_RUN: the folder `make bench-e2e` set up,
build/peers-run). Writes OUT_DIR/mlp_b32_weights_in.onnx, one .bin per weight, weights.json.
"""
import json
import pathlib
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def main():
    peers, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    model = onnx.load(peers / "models" / "mlp_b32.onnx")
    graph = model.graph
    shapes = {}
    for init in list(graph.initializer):
        array = numpy_helper.to_array(init).astype(np.float32)
        graph.input.append(
            helper.make_tensor_value_info(init.name, onnx.TensorProto.FLOAT, list(array.shape)))
        array.tofile(out / f"{init.name}.bin")
        shapes[init.name] = list(array.shape)
    del graph.initializer[:]
    onnx.checker.check_model(model)
    onnx.save(model, out / "mlp_b32_weights_in.onnx")
    (out / "weights.json").write_text(json.dumps(shapes))


if __name__ == "__main__":
    main()
