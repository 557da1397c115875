"""A fresh process: `paddle.jit.load` an export and fine-tune it (test_train_after_load.py).

    python load_and_train.py [--no-runtime] PREFIX OUT.npz [IMPORT_DIR]

The runtime is imported (unless --no-runtime: the framework's own path, for
support_matrix.py), not the module that defines the model's PyLayers: training must import
it by itself (IMPORT_DIR, when given, is where it can). OUT.npz gets the losses and the
parameters after training, by their names in the export. Errors end the process with
their traceback.
"""
import os
import sys

import numpy as np
import paddle

if sys.argv[1:2] == ["--no-runtime"]:
    del sys.argv[1]
else:
    import pylayer2static_runtime  # noqa: F401 - its hooks rebuild the export's calls

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "special"))
import train_after_load  # noqa: E402 - the batches and the loop; the original module


def main(prefix: str, out: str, import_dir: str = "") -> None:
    if import_dir:
        sys.path.insert(0, import_dir)
    loaded = paddle.jit.load(prefix)
    loaded.train()
    losses = train_after_load.train(loaded, train_after_load.batches())
    parameters = {name: loaded._parameters[dy_name].numpy()
                  for name, dy_name in loaded._persistable_var_name_dict.items() if dy_name in loaded._parameters}
    np.savez(out, losses=np.array(losses), **{f"param:{k}": v for k, v in parameters.items()})


if __name__ == "__main__":
    main(*sys.argv[1:])
