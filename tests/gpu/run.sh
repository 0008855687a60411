#!/bin/sh
# The GPU checks, in one go (about 3 minutes on an H200 machine), from the
# repository root:
#   tests/gpu/run.sh [DATASET]
# the GPU C tests (device bytes, events, the device pool stress: consumer
# holding every batch, stop while blocked; normalization against the host
# reference), the Python CUDA test (torch tensors on cuda:0, zero-copy,
# equal to the CPU batches, ready on a side stream), cuda-upload-bench
# (H2D GB/s against plain cudaMemcpyAsync: >= 0.85) and the whole
# pipeline's images/s into host and device memory. Without DATASET a small
# one is made. Raw output goes to $OUT (or /tmp/spdl-gpu): gpu-run.log,
# c-tests.log, python.log, bench.md.
#
# On a machine without GStreamer (the lent GPU machines have CUDA and
# PyTorch but no GStreamer or PyGObject), prepare here and carry both
# folders:  tests/gpu/prepare-carry   (makes build-gpu/ and .gpu-runtime/)
# On a machine without a GPU every part says SKIP and why.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-/tmp/spdl-gpu}
mkdir -p "$OUT"
RUNTIME=$ROOT/.gpu-runtime
PY=python3
if [ -d "$RUNTIME" ]; then
  LIBS=$RUNTIME/usr/lib/x86_64-linux-gnu
  export LD_LIBRARY_PATH=$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export GST_PLUGIN_SYSTEM_PATH_1_0=$LIBS/gstreamer-1.0
  export GST_PLUGIN_SCANNER_1_0=$LIBS/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner
  export PATH=$RUNTIME/usr/bin:$PATH
  export GI_TYPELIB_PATH=$LIBS/girepository-1.0
  [ -d "$RUNTIME/python" ] && export PYTHONPATH=$RUNTIME/python
elif ! python3 -c 'import gi' 2>/dev/null && [ -x /usr/bin/python3 ]; then
  PY=/usr/bin/python3           # Debian's, with python3-gi
fi
# the plugin finds libcudart.so.13 in /usr/local/cuda/lib64 (its RUNPATH);
# elsewhere, take the CUDA runtime that torch's wheels bring
if [ ! -e /usr/local/cuda/lib64/libcudart.so.13 ]; then
  CUDART=$(find /usr/local/cuda*/lib64 /usr/lib/x86_64-linux-gnu \
    "$($PY -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null)" \
    -name 'libcudart.so.13*' 2>/dev/null | head -1)
  [ -n "$CUDART" ] && export LD_LIBRARY_PATH=$(dirname "$CUDART")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
export GST_PLUGIN_PATH_1_0=$ROOT/build-gpu/gst/spdl:$ROOT/build-gpu/ext/cuda
export GST_PLUGIN_LOADING_WHITELIST=gstreamer:gst-plugins-base:gst-spdl
export GST_REGISTRY=/tmp/spdl-gpu-registry.bin
export CK_DEFAULT_TIMEOUT=300

section () { echo; echo "== $*"; }

skip_or_status () {   # exit status of a test program: 77 is a skip
  case $1 in
    0) echo "-- $2: PASS" ;;
    77) echo "-- $2: SKIP (no CUDA device)" ;;
    *) echo "-- $2: FAIL (exit $1)" ;;
  esac
}

{
  section "machine"
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi -L 2>&1 | head -4
    nvidia-smi --query-gpu=driver_version,pcie.link.gen.max,pcie.link.width.max \
      --format=csv 2>&1 | head -2
  else
    echo "no nvidia-smi"
  fi
  echo "cores: $(nproc)"
  $PY -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' 2>&1

  [ -f build-gpu/ext/cuda/libgstspdlcuda.so ] &&
    ldd build-gpu/ext/cuda/libgstspdlcuda.so | grep -E "cudart|not found"

  section "build"
  if [ ! -f build-gpu/build.ninja ]; then
    meson setup build-gpu -Dcuda=enabled -Dtests=enabled >/dev/null || exit 1
  fi
  [ -d "$RUNTIME" ] || ninja -C build-gpu >/dev/null || exit 1
  echo "build-gpu ready"

  section "GPU C tests (raw: c-tests.log)"
  : > "$OUT/c-tests.log"
  for t in elements_spdlcudaupload spdlcudaupload_gpu; do
    timeout 300 build-gpu/tests/check/$t > /tmp/spdl-gpu-test.log 2>&1
    rc=$?
    cat /tmp/spdl-gpu-test.log >> "$OUT/c-tests.log"
    grep -E "^(SKIP|[0-9]+%: Checks|.*:[FE]:)|device memory free" \
      /tmp/spdl-gpu-test.log | tail -12
    skip_or_status $rc $t
  done

  DATASET=${1:-}
  if [ -z "$DATASET" ]; then
    DATASET=/tmp/spdl-gpu-dataset
    [ -d "$DATASET" ] || $PY -c "import sys; sys.path.insert(0, 'python'); \
from spdlgst.demo import make_dataset; make_dataset('$DATASET', 2048, 16)" ||
      echo "could not make a dataset"
  fi

  section "Python CUDA test (raw: python.log)"
  if $PY -c 'import gi' 2>/dev/null; then
    (cd tests/python && PYTHONPATH=$ROOT/python${PYTHONPATH:+:$PYTHONPATH} \
      timeout 300 $PY -m pytest -v -rs -p no:cacheprovider test_cuda.py) \
      > "$OUT/python.log" 2>&1
    rc=$?
    grep -E "PASSED|FAILED|SKIPPED|ERROR|passed|failed" "$OUT/python.log" | tail -20
    echo "-- pytest exit $rc"
  else
    echo "-- SKIP: no PyGObject for $($PY --version 2>&1) (tests/gpu/prepare-carry builds one)"
  fi

  section "upload benchmark and whole pipeline (raw: bench.md)"
  timeout 300 build-gpu/bench/cuda-upload-bench --rounds 3 "$DATASET" \
    > "$OUT/bench.md" 2>&1
  skip_or_status $? cuda-upload-bench
  cat "$OUT/bench.md"
} 2>&1 | tee "$OUT/gpu-run.log"
