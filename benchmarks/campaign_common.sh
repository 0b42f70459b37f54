# The common part of the GPU campaign scripts (benchmarks/*_campaign.sh), sourced with $name
# and $limit (seconds) set: NVLink multicast off, the results folder .out/$name (resumed from
# runs/local/$name where that exists and .out has none), the deadline with `left` (seconds to
# it), and $OUT/campaign.tgz packed from .out/$name on any exit.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONUNBUFFERED=1
out=.out/$name
mkdir -p "$out/logs" "${OUT:-.out}"
deadline=$(( $(date +%s) + limit ))
left() { echo $(( deadline - $(date +%s) )); }
pack() { tar czf "${OUT:-.out}/campaign.tgz" -C .out "$name"; echo "packed $(du -sh "${OUT:-.out}/campaign.tgz" | cut -f1)"; }
trap pack EXIT

if [ ! -d "$out/results" ] && [ -d "runs/local/$name/results" ]; then
    cp -r "runs/local/$name/results" "runs/local/$name/systems" "$out/"
fi
