#!/usr/bin/env bash
# The release binary with `--features cuda` on a machine without a GPU or a
# CUDA toolkit (docs/performance.md, "The GPU path"): the CUDA 13.0 compiler
# and libraries come from pinned PyPI wheels in a venv under target/, the
# linker gets unversioned names for the wheels' libraries and a stub
# libcuda.so (the driver's library; the real one is loaded at run time).
# Its own target dir (target/cuda), so target/release/hardneg stays the
# plain build. Downloads only here, at build time (the wheels, the crates);
# the binary downloads nothing.
#
#   scripts/build-cuda.sh              # -> target/cuda/release/hardneg
#   scripts/build-cuda.sh --pack DIR   # also DIR/hardneg.xz and libcurand.so.10.xz, for the GPU machine (scripts/gpu-bench.sh)
#   scripts/build-cuda.sh --dev        # CI's check: compile and link in the dev profile, in target/
#                                      # (the kernels unoptimized, as PTX: scripts/nvcc-dev)
#
# --dev reuses the test build's dependencies: only the crates the feature
# touches rebuild (cudarc, candle-kernels, candle, hardneg).
#
# CUDA_COMPUTE_CAP (default 90: Hopper, the H100/H200) picks the GPU
# generation the kernels are compiled for.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
pack=""
dev=0
case "${1:-}" in
  --pack) pack=${2:?--pack needs a directory} ;;
  --dev) dev=1 ;;
  "") ;;
  *) echo "usage: $0 [--pack DIR | --dev]" >&2; exit 2 ;;
esac
if [ "$dev" = 1 ]; then
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
  out_dir=debug
  # The binary's own test harness: the hardneg library and main.rs with
  # cuda, linked against the CUDA libraries like the binary, with the
  # features the test build resolved (dev-dependencies included), so its
  # dependencies are reused and target/debug/hardneg stays the plain build.
  build() { cargo test --features cuda --no-run --bin hardneg; }
else
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target/cuda}
  out_dir=release
  build() { cargo build --release --features cuda --bin hardneg; }
fi
venv=$root/target/cuda-venv
# nvvm pinned with nvcc: the newest nvvm writes PTX (.version 9.5) that the
# 13.0 ptxas refuses.
wheels=(nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.96
  nvidia-cuda-cccl==13.0.85 nvidia-cublas==13.0.2.14 nvidia-curand==10.4.5.25 nvidia-cuda-nvrtc==13.0.88)
if [ "$(cat "$venv/.wheels" 2>/dev/null)" != "${wheels[*]}" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "${wheels[@]}"
  echo "${wheels[*]}" >"$venv/.wheels"
fi
cu=$(echo "$venv"/lib/python3.*/site-packages/nvidia/cu13)
[ -x "$cu/bin/nvcc" ] || { echo "no nvcc in $cu" >&2; exit 1; }

# What the linker reads: candle links -lcuda -lnvrtc -lcurand -lcublas
# -lcublasLt -lcudart; the wheels ship only versioned names.
link=$CARGO_TARGET_DIR/cuda-link
mkdir -p "$link"
for name in cublas cublasLt cudart curand nvrtc; do
  lib=$(ls "$cu/lib/lib$name.so."[0-9]* | head -1)
  ln -sf "$lib" "$link/lib$name.so"
done
# The stub driver library: every cu* name the driver API headers mention
# (a superset of what cudarc calls), plus any cu* name the built
# cudarc/candle rlibs leave undefined (the shared note's way, once they
# exist), each failing with CUDA_ERROR_NOT_INITIALIZED (3), under the
# driver's soname, so the binary asks for libcuda.so.1.
stub() {
  {
    grep -ohE '\bcu[A-Z][A-Za-z0-9_]*\b' "$cu/include/cuda.h" "$cu"/include/cuda[A-Z]*.h
    for rlib in "$CARGO_TARGET_DIR/$out_dir"/deps/lib{cudarc,candle_core}-*.rlib; do
      [ -f "$rlib" ] && nm --undefined-only "$rlib" 2>/dev/null | grep -oE '\bcu[A-Z][A-Za-z0-9_]*$' || true
    done
  } | sort -u | awk '{ print "int " $1 "(void) { return 3; }" }' >"$link/cuda-stub.c.new"
  if ! cmp -s "$link/cuda-stub.c.new" "$link/cuda-stub.c" || [ ! -f "$link/libcuda.so" ]; then
    mv "$link/cuda-stub.c.new" "$link/cuda-stub.c"
    cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$link/libcuda.so" "$link/cuda-stub.c"
  fi
}
stub

export PATH="$cu/bin:$PATH" CUDA_ROOT="$cu" CUDA_PATH="$cu" CUDA_HOME="$cu"
if [ "$dev" = 1 ]; then
  # candle-kernels' nvcc pass through scripts/nvcc-dev (unoptimized PTX:
  # the check links the kernels, never runs them): 549 s of CPU -> 111 s
  # on the 2-core VM (docs/performance.md, session 58). cudaforge looks for
  # the toolkit's include/ and lib64/ beside the nvcc it is given.
  wrap=$link/nvcc-dev
  mkdir -p "$wrap/bin"
  ln -sfn "$root/scripts/nvcc-dev" "$wrap/bin/nvcc"
  ln -sfn "$cu/include" "$wrap/include"
  ln -sfn "$cu/lib" "$wrap/lib64"
  export NVCC="$wrap/bin/nvcc" HARDNEG_NVCC_REAL="$cu/bin/nvcc"
fi
export CUDA_COMPUTE_CAP=${CUDA_COMPUTE_CAP:-90}
# Read by the linker only: changing it rebuilds no crate.
export LIBRARY_PATH="$link${LIBRARY_PATH:+:$LIBRARY_PATH}"
# A link that misses a driver symbol: once more, with the rlibs' names.
build || { stub && build; }
[ "$dev" = 1 ] && exit 0
bin=$CARGO_TARGET_DIR/$out_dir/hardneg
ls -l "$bin"
if [ -n "$pack" ]; then
  mkdir -p "$pack"
  xz -T0 -6 -c "$bin" >"$pack/hardneg.xz"
  # cuRAND for a machine whose PyTorch wheels lack it (newer than 2.11):
  # gpu-bench.sh puts it after the machine's own libraries.
  [ "$pack/libcurand.so.10.xz" -nt "$cu/lib/libcurand.so.10" ] ||
    xz -T0 -6 -c "$cu/lib/libcurand.so.10" >"$pack/libcurand.so.10.xz"
  ls -l "$pack/hardneg.xz" "$pack/libcurand.so.10.xz"
fi
