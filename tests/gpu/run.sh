#!/bin/sh
# Run on a machine with an NVIDIA GPU, from the repository root, in one go:
# builds (unless build-gpu/ is already there), runs the GPU tests, and
# benchmarks the upload and the whole pipeline.
#   tests/gpu/run.sh [DATASET]
# Without DATASET a small one is made. The log also goes to $OUT/gpu-run.log
# when OUT is set.
#
# On a machine without GStreamer's packages (the lent GPU machines have CUDA
# and PyTorch but no GStreamer, and install nothing), prepare here and carry
# both folders:
#   tests/gpu/prepare-carry      # makes build-gpu/ and .gpu-runtime/
# run.sh then uses .gpu-runtime/ (Debian's GStreamer and libjpeg libraries,
# unpacked) through LD_LIBRARY_PATH.
set -u
cd "$(dirname "$0")/../.."
LOG=${OUT:-/tmp}/gpu-run.log
RUNTIME=$PWD/.gpu-runtime
if [ -d "$RUNTIME" ]; then
  LIBS=$RUNTIME/usr/lib/x86_64-linux-gnu
  export LD_LIBRARY_PATH=$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export GST_PLUGIN_SYSTEM_PATH_1_0=$LIBS/gstreamer-1.0
  export GST_PLUGIN_SCANNER_1_0=$LIBS/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner
  export PATH=$RUNTIME/usr/bin:$PATH
  export GI_TYPELIB_PATH=$LIBS/girepository-1.0
fi
(
  echo "== machine"; nvidia-smi -L 2>&1 | head -4; nproc
  echo "== build"
  if [ ! -f build-gpu/build.ninja ]; then
    meson setup build-gpu -Dcuda=enabled -Dtests=enabled || exit 1
  fi
  [ -d "$RUNTIME" ] || ninja -C build-gpu || exit 1
  echo "== GPU tests"
  if [ -d "$RUNTIME" ]; then
    # carried build: run the test programs directly
    export GST_PLUGIN_PATH_1_0=$PWD/build-gpu/gst/spdl:$PWD/build-gpu/ext/cuda
    build-gpu/tests/check/elements_spdlcudaupload
    build-gpu/tests/check/spdlcudaupload_gpu
  else
    meson test -C build-gpu --suite gpu --suite cuda --print-errorlogs -v 2>&1 | tail -40
  fi
  export GST_PLUGIN_PATH=$PWD/build-gpu/gst/spdl:$PWD/build-gpu/ext/cuda
  DATASET=${1:-}
  if [ -z "$DATASET" ]; then
    DATASET=/tmp/spdl-gpu-dataset
    [ -d "$DATASET" ] || python3 -c "import sys; sys.path.insert(0, 'python'); \
from spdlgst.demo import make_dataset; make_dataset('$DATASET', 2048, 16)"
  fi
  echo "== upload benchmark"
  build-gpu/bench/cuda-upload-bench "$DATASET"
  echo "== Python device batches (needs python3-gi there)"
  PYTHONPATH=$PWD/python python3 -m pytest -q -rs -p no:cacheprovider \
    tests/python/test_cuda.py 2>&1 | tail -5
) 2>&1 | tee "$LOG"
