#!/usr/bin/env bash
# The GPU benchmark, one call on the accelerator machine (docs/performance.md,
# "The GPU path"): needs only the cuda binary packed by
# `scripts/build-cuda.sh --pack target/gpu-carry` and the machine's own
# Python (PyTorch for CUDA 13, transformers, torchvision, Pillow); no Rust,
# no network. Makes a seeded ViT-B/32 checkpoint with transformers, a demo
# data dir, scores it with hardneg on the GPU in f32, bf16 and f16, runs
# transformers' CLIPModel on the same images and captions
# (scripts/reference/gpu_clip_bench.py) and writes everything under $OUT.
#
#   scripts/gpu-bench.sh [CARRY_DIR]     # default target/gpu-carry
#
# CARRY_DIR holds hardneg.xz and libcurand.so.10.xz (used only where the
# machine's wheels lack it). At most 7 files come back: steps.txt,
# score-{f32,bf16,f16}.log, reference.txt, summary.txt, summary.json.
# Env: OUT (default target/gpu-bench-out), HARDNEG_BIN (a binary instead of
# CARRY_DIR's), GPU_BENCH_INSTANCES (2100), GPU_BENCH_DTYPES ("f32 bf16 f16"),
# GPU_BENCH_BATCH (256), PYTHON (python3), GPU_BENCH_DEVICE (cuda; cpu
# tries the pipeline on a machine without a GPU, with --tiny weights unless
# GPU_BENCH_TINY=0).
set -uo pipefail
cd "$(dirname "$0")/.."
carry=${1:-target/gpu-carry}
out=${OUT:-$PWD/target/gpu-bench-out}
n=${GPU_BENCH_INSTANCES:-2100}
batch=${GPU_BENCH_BATCH:-256}
py=${PYTHON:-python3}
device=${GPU_BENCH_DEVICE:-cuda}
mkdir -p "$out"
work=$(mktemp -d /tmp/gpu-bench.XXXXXX)
log() { echo "== [${SECONDS}s] $*" | tee -a "$out/steps.txt" >&2; }
export PYTHONUNBUFFERED=1

if [ -n "${HARDNEG_BIN:-}" ]; then
  hn=$HARDNEG_BIN # a binary at hand (a try on the CPU machine)
else
  log "unpacking the binary"
  xz -dc "$carry/hardneg.xz" >"$work/hardneg" && chmod +x "$work/hardneg" || exit 1
  hn=$work/hardneg
fi
# The CUDA libraries hardneg links: the machine's PyTorch wheels hold them
# (every lib folder under site-packages/nvidia), the driver in
# /usr/local/nvidia/lib64.
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
libs=$(find "$site/nvidia" -type d -name lib 2>/dev/null | tr '\n' ':')
# Newer PyTorch wheels no longer bring cuRAND, which candle links: the
# carried copy (build-cuda.sh --pack) comes after the machine's own.
fallback=""
if [ -f "$carry/libcurand.so.10.xz" ]; then
  mkdir -p "$work/fallback-libs"
  xz -dc "$carry/libcurand.so.10.xz" >"$work/fallback-libs/libcurand.so.10" && fallback=$work/fallback-libs
fi
export LD_LIBRARY_PATH="${libs}/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}${fallback:+:$fallback}${GPU_BENCH_EXTRA_LIBS:+:$GPU_BENCH_EXTRA_LIBS}"
{ ldd "$hn" | grep -E 'not found|cuda|cublas|nvrtc|curand'; nvidia-smi -L; "$py" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'; } 2>&1 | tee -a "$out/steps.txt" >&2

log "seeding $n demo instances"
data=$work/data
"$hn" serve --demo --demo-size "$n" --data-dir "$data" --bind 127.0.0.1:0 >"$work/serve.log" 2>&1 &
server=$!
# Seeded once it listens (or once it stopped, having seeded or not).
for _ in $(seq 600); do
  grep -q "listening on" "$work/serve.log" && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.5
done
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
grep -E "loaded|scored|rror" "$work/serve.log" | tee -a "$out/steps.txt" >&2

log "making the checkpoint"
tiny=""
# On the CPU a tiny model unless GPU_BENCH_TINY=0 (ViT-B/32 on the CPU: minutes).
[ "$device" = cpu ] && [ "${GPU_BENCH_TINY:-1}" = 1 ] && tiny="--tiny"
ckpt_args=()
[ "${GPU_BENCH_NUMPY:-0}" = 1 ] && ckpt_args+=(--numpy)
"$py" scripts/reference/make_clip_checkpoint.py "$work/model" --data-dir "$data" --seed 0 $tiny "${ckpt_args[@]}" || exit 1

logs=""
runs=""
for dtype in ${GPU_BENCH_DTYPES:-f32 bf16 f16}; do
  log "hardneg score --dtype $dtype"
  start=$SECONDS
  timeout 150 "$hn" score --model-dir "$work/model" --name "hn-$dtype" --dataset demo --device "$device" \
    --dtype "$dtype" --batch "$batch" --data-dir "$data" >"$out/score-$dtype.log" 2>&1
  echo "exit $?, $((SECONDS - start)) s wall (loading and hashing the weights included)" >>"$out/score-$dtype.log"
  tail -n 6 "$out/score-$dtype.log" >&2
  logs="${logs:+$logs,}hn-$dtype=$out/score-$dtype.log"
  runs="${runs:+$runs,}hn-$dtype"
done

log "transformers on the same images and captions"
torch_args=()
[ "${GPU_BENCH_NO_TORCH:-0}" = 1 ] && torch_args+=(--no-torch)
timeout 240 "$py" scripts/reference/gpu_clip_bench.py "$data" "$work/model" --out "$out" --runs "$runs" \
  --logs "$logs" --batch "$batch" --device "$device" "${torch_args[@]}" 2>&1 | tee "$out/reference.txt"
log "done"
rm -rf "$work"
