# source testbed/slurm/env.sh: point srun/sinfo/sbatch at the testbed's Slurm.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export SLURM_CONF=$SLURM_CONF_FILE
