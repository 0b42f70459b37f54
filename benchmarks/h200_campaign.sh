#!/usr/bin/env bash
# The H200 measurement campaign of `collector run --suite v0.5 --scale small`, in phases that
# each fit one command on a lent 4-GPU machine. Results go to .out/h200 (kept between calls
# while the machine stays up) and are packed into $OUT/campaign.tgz at the end of every phase.
#
#   bash benchmarks/h200_campaign.sh <phase> [seconds]
#
# Single-GPU configurations run side by side, one process per GPU (CUDA_VISIBLE_DEVICES), so
# four of them share the host; every multi-GPU configuration and every no-p2p run has the
# machine to itself. Runs resume: a phase cut short by its time limit is completed by the next.
set -uo pipefail
phase=${1:?phase}
limit=${2:-540}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
out=.out/h200
mkdir -p "$out" "${OUT:-.out}"
deadline=$(( $(date +%s) + limit ))
left() { echo $(( deadline - $(date +%s) )); }
run() {  # run <cuda devices> <benchmarks> <gpus> <precision> <interconnect> [extra...]
    local devs=$1 benches=$2 gpus=$3 prec=$4 ic=$5; shift 5
    if [ "$(left)" -lt 20 ]; then echo "no time left for $benches $gpus $prec $ic"; return; fi
    CUDA_VISIBLE_DEVICES=$devs timeout --signal=TERM --kill-after=30 "$(left)" \
        python3 -m collector.cli run --suite v0.5 --scale small --benchmarks "$benches" \
        --gpus "$gpus" --precision "$prec" --interconnect "$ic" --repeats 3 --resume \
        --no-ingest --out "$out" "$@" >> "$out/log-$phase-${devs//,/}-${benches//,/-}-$gpus-$prec-$ic.txt" 2>&1
}
seed() {  # start from the committed runs, so that --resume runs only what is missing
    if [ ! -d "$out/results" ] && [ -d runs/local/h200-x4/results ]; then
        cp -r runs/local/h200-x4/results runs/local/h200-x4/systems "$out/"
    fi
}
fp32_multi() {  # fp32 on 4 and 2 GPUs, both modes, the cheapest benchmarks first
    local cheap=ncf,minigo,ssd,gnmt,maskrcnn dear=transformer,resnet
    for set in "$cheap" "$dear"; do
        for ic in default no-p2p; do run 0,1,2,3 "$set" 4 fp32 "$ic" --no-ceilings; done
        ( run 0,1 "$set" 2 fp32 default --no-ceilings ) &
        ( run 2,3 "$set" 2 fp32 no-p2p --no-ceilings ) &
        wait
    done
}
fits() {  # fits <seconds>: whether a task of at most that many seconds ends before the deadline
    if [ "$(left)" -ge "$1" ]; then return 0; fi
    echo "skipped (needs ${1}s, $(left)s left): ${*:2}"; return 1
}
rest() {  # the last of the fp32 matrix, one run per task, longest first, so none is cut short
    for k in 1 2 3; do
        fits 300 pair resnet 2 fp32 $k && {
            ( run 0,1 resnet 2 fp32 default --no-ceilings --repeats $k ) &
            ( run 2,3 resnet 2 fp32 no-p2p --no-ceilings --repeats $k ) &
            wait; }
    done
    fits 250 resnet 4 fp32 no-p2p && run 0,1,2,3 resnet 4 fp32 no-p2p --no-ceilings
    fits 200 resnet 1 fp32 && run 0 resnet 1 fp32 default --no-ceilings
}
pack() { tar czf "${OUT:-.out}/campaign.tgz" -C .out h200; echo "packed $(du -sh "${OUT:-.out}/campaign.tgz" | cut -f1)"; }
trap pack EXIT

case $phase in
  probe)
    nvidia-smi; nvidia-smi topo -m; nvidia-smi topo -p2p r
    python3 -c 'import torch; print(torch.__version__, torch.cuda.device_count(), torch.version.cuda, torch.backends.cudnn.version(), torch.cuda.nccl.version())'
    ;;
  one)  # 1 GPU, bf16 then fp32, all seven benchmarks; the harness on GPU 0 first
    { nvidia-smi topo -m; nvidia-smi -q | head -60; } > "$out/topology.txt" 2>&1
    ( CUDA_VISIBLE_DEVICES=0 timeout 150 python3 benchmarks/harness.py > "$out/harness-eager.txt" 2>&1
      CUDA_VISIBLE_DEVICES=0 timeout 200 python3 benchmarks/harness.py --compile > "$out/harness-compile.txt" 2>&1
      run 0 resnet,ncf 1 bf16 default --no-ceilings
      run 0 resnet,ncf 1 fp32 default --no-ceilings ) &
    ( run 1 ssd,minigo 1 bf16 default; run 1 ssd,minigo 1 fp32 default --no-ceilings ) &
    ( run 2 maskrcnn 1 bf16 default --no-ceilings; run 2 maskrcnn 1 fp32 default --no-ceilings ) &
    ( run 3 gnmt,transformer 1 bf16 default --no-ceilings; run 3 gnmt,transformer 1 fp32 default --no-ceilings ) &
    wait
    ;;
  two)  # retuned small configurations on 1 GPU, then ResNet-50 on 2 and 4, then 4-GPU bf16
    ( run 0 resnet 1 bf16 default --no-ceilings ) &
    ( run 1 ncf 1 bf16 default --no-ceilings; run 1 ncf 1 fp32 default --no-ceilings ) &
    ( run 2 transformer 1 bf16 default --no-ceilings ) &
    ( run 3 resnet 1 fp32 default --no-ceilings --repeats 1 ) &
    wait
    run 0,1,2,3 resnet 2,4 bf16 default
    for b in ssd minigo gnmt ncf transformer maskrcnn; do run 0,1,2,3 "$b" 4 bf16 default --no-ceilings; done
    ;;
  three)  # interconnect: no-p2p against default on 2 and 4 GPUs, bf16
    run 0,1,2,3 resnet 4,2 bf16 no-p2p --no-ceilings
    for b in ssd minigo gnmt ncf transformer maskrcnn; do run 0,1,2,3 "$b" 4 bf16 no-p2p --no-ceilings; done
    ( run 0,1 ssd,minigo,gnmt,ncf 2 bf16 default --no-ceilings ) &
    ( run 2,3 transformer,maskrcnn 2 bf16 default --no-ceilings ) &
    wait
    ;;
  resnet-scaling)  # the whole machine: ResNet-50 bf16 on 2 and 4 GPUs, default and no-p2p
    run 0,1,2,3 resnet 2,4 bf16 default
    run 0,1,2,3 resnet 2,4 bf16 no-p2p --no-ceilings
    ;;
  multi)  # 2 and 4 GPUs, bf16, default then no-p2p, the other six benchmarks
    for b in ssd ncf gnmt transformer minigo maskrcnn; do run 0,1,2,3 "$b" 4 bf16 default --no-ceilings; done
    for b in ssd ncf gnmt transformer minigo maskrcnn; do run 0,1,2,3 "$b" 2 bf16 default --no-ceilings; done
    for b in ssd ncf gnmt transformer minigo maskrcnn; do run 0,1,2,3 "$b" 4 bf16 no-p2p --no-ceilings; done
    for b in ssd ncf gnmt transformer minigo maskrcnn; do run 0,1,2,3 "$b" 2 bf16 no-p2p --no-ceilings; done
    ;;
  fp32-multi)  # fp32 on 4 and 2 GPUs, both modes, then the last single-GPU fp32 ResNet-50 run
    seed
    fp32_multi
    run 0 resnet 1 fp32 default --no-ceilings
    ;;
  fp32-rest)  # what fp32-multi left: each task starts only when it can end before the deadline
    seed
    rest
    ;;
  resnet512)  # ResNet-50 small at 512 images per GPU, bf16, each configuration alone
    rm -rf "$out"/results/*/resnet
    run 0 resnet 1 bf16 default --no-ceilings
    run 0,1,2,3 resnet 2,4 bf16 default --no-ceilings
    run 0,1,2,3 resnet 4,2 bf16 no-p2p --no-ceilings
    ;;
  finish)  # ResNet-50 on 2 GPUs without p2p, then four benchmarks on 2 GPUs (two jobs side by side)
    run 0,1,2,3 resnet 2 bf16 no-p2p --no-ceilings
    ( run 0,1 ncf,minigo,ssd,gnmt 2 bf16 default --no-ceilings ) &
    ( run 2,3 ncf,minigo,ssd,gnmt 2 bf16 no-p2p --no-ceilings ) &
    wait
    ;;
  two-gpu)  # the rest at 2 GPUs, bf16 (two jobs side by side), with single-GPU fp32 beside them
    ( run 0 resnet 1 fp32 default --no-ceilings --repeats 2 ) &
    ( run 1 transformer 1 fp32 default --no-ceilings ) &
    ( run 2,3 ssd,minigo,gnmt,ncf,transformer,maskrcnn 2 bf16 default --no-ceilings ) &
    wait
    run 0,1,2,3 transformer,maskrcnn 4 bf16 default --no-ceilings
    run 0,1,2,3 transformer,maskrcnn 4 bf16 no-p2p --no-ceilings
    ( run 0,1 ssd,minigo,gnmt,ncf 2 bf16 no-p2p --no-ceilings ) &
    ( run 2,3 transformer,maskrcnn 2 bf16 no-p2p --no-ceilings ) &
    wait
    ;;
  variants)  # ResNet-50 small loop settings through the product: 4 epochs each, for throughput
    vdir=.out/h200/variants; mkdir -p "$vdir"
    mk() { local name=$1; shift; python3 benchmarks/suite_variant.py v0.5 resnet small "$vdir/$name.yml" max_epochs=4 eval_every=4 "$@"; }
    vrun() {  # vrun <variant> <cuda devices> <gpus> <out>
        if [ "$(left)" -lt 60 ]; then echo "no time left for variant $1 on $2"; return; fi
        CUDA_VISIBLE_DEVICES=$2 timeout --signal=TERM --kill-after=30 "$(left)" \
            python3 -m collector.cli run --suite "$vdir/$1.yml" --scale small --benchmarks resnet \
            --gpus "$3" --precision bf16 --interconnect default --repeats 1 --no-ingest --no-ceilings \
            --out "$vdir/$4" > "$vdir/log-$4.txt" 2>&1
    }
    mk b512
    mk b512-nobcast params.ddp.broadcast_buffers=false params.ddp.bucket_cap_mb=100
    mk b768 params.batch_size=768
    mk b1024 params.batch_size=1024
    vrun b512 0 1 b512-1gpu
    for i in 0 1 2 3; do vrun b512 "$i" 1 "b512-1gpu-side-by-side-gpu$i" & done; wait
    vrun b512 0,1,2,3 4 b512-4gpu
    vrun b512-nobcast 0,1,2,3 4 b512-nobcast-4gpu
    vrun b1024 0 1 b1024-1gpu
    vrun b1024 0,1,2,3 4 b1024-4gpu
    vrun b768 0 1 b768-1gpu
    vrun b768 0,1,2,3 4 b768-4gpu
    vrun b512 0,1,2,3 4 b512-4gpu-again
    python3 benchmarks/throughput_summary.py "$vdir" | tee "$vdir/summary.txt"
    run 0,1,2,3 transformer,maskrcnn 4 bf16 default --no-ceilings
    run 0,1,2,3 transformer,maskrcnn 4 bf16 no-p2p --no-ceilings
    ;;
  resnet1024)  # ResNet-50 small at 1024 images per GPU, bf16, each configuration alone
    run 0,1,2,3 resnet 4,2 bf16 default --no-ceilings
    run 0 resnet 1 bf16 default --no-ceilings
    run 0,1,2,3 resnet 4,2 bf16 no-p2p --no-ceilings
    ;;
  resnet-maxlr)  # ResNet-50 small on 4 GPUs with the learning rate capped, then 2 GPUs without p2p
    rm -rf "$out"/results/vm_4xh200_bf16_*/resnet "$out"/results/vm_2xh200_bf16_no-p2p/resnet
    run 0,1,2,3 resnet 4 bf16 default --no-ceilings
    run 0,1,2,3 resnet 4,2 bf16 no-p2p --no-ceilings
    ;;
  matrix)  # whatever the H200 matrix still lacks, cheapest and most wanted first; resumable
    seed
    # single-GPU fp32 ResNet-50 and Transformer on GPUs 0 and 1, the missing 2-GPU bf16 on 2 and 3
    ( run 0 resnet 1 fp32 default --no-ceilings ) &
    ( run 1 transformer 1 fp32 default --no-ceilings ) &
    ( run 2,3 ssd,gnmt,transformer,maskrcnn 2 bf16 default --no-ceilings
      run 2,3 gnmt,transformer,maskrcnn 2 bf16 no-p2p --no-ceilings ) &
    wait
    run 0,1,2,3 ncf,transformer,maskrcnn 4 bf16 default --no-ceilings
    run 0,1,2,3 transformer,maskrcnn 4 bf16 no-p2p --no-ceilings
    fp32_multi
    ;;
  maskrcnn-multi)  # Mask R-CNN on 2 GPUs (the two modes side by side), then on 4, bf16
    seed
    ( run 0,1 maskrcnn 2 bf16 default --no-ceilings ) &
    ( run 2,3 maskrcnn 2 bf16 no-p2p --no-ceilings ) &
    wait
    run 0,1,2,3 maskrcnn 4 bf16 default --no-ceilings
    run 0,1,2,3 maskrcnn 4 bf16 no-p2p --no-ceilings
    ;;
  *) echo "unknown phase $phase"; exit 2 ;;
esac
