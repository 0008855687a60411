#!/bin/sh
# Run on a machine with an NVIDIA GPU, from the repository root, in one go:
# builds, runs the GPU tests, and benchmarks the upload and the pipeline.
#   tests/gpu/run.sh [DATASET]
# Without DATASET a small one is made. Output also goes to $OUT if set.
set -u
cd "$(dirname "$0")/../.."
LOG=${OUT:-/tmp}/gpu-run.log
(
  echo "== machine"; nvidia-smi -L 2>&1 | head -4; nproc
  echo "== build"
  if [ ! -f build-gpu/build.ninja ]; then meson setup build-gpu -Dcuda=enabled -Dtests=enabled; fi
  ninja -C build-gpu || exit 1
  echo "== GPU tests"
  meson test -C build-gpu --suite gpu --suite cuda --print-errorlogs -v 2>&1 | tail -40
  export GST_PLUGIN_PATH=$PWD/build-gpu/gst/spdl:$PWD/build-gpu/ext/cuda
  DATASET=${1:-}
  if [ -z "$DATASET" ]; then
    DATASET=/tmp/spdl-gpu-dataset
    [ -d "$DATASET" ] || /usr/bin/python3 -c "import sys; sys.path.insert(0, 'python'); \
from spdlgst.demo import make_dataset; make_dataset('$DATASET', 2048, 16)"
  fi
  echo "== upload benchmark"
  build-gpu/bench/cuda-upload-bench "$DATASET"
  echo "== Python device batches"
  PYTHONPATH=$PWD/python /usr/bin/python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_cuda.py 2>&1 | tail -5
) 2>&1 | tee "$LOG"
