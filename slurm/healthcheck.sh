#!/bin/bash
# Fast node-local checks for Slurm (a few seconds, no MPI, no job): that this node has the
# GPUs and InfiniBand ports it should, each port ACTIVE at the expected rate.
#
# As HealthCheckProgram (slurm.conf; slurmd runs it every HealthCheckInterval seconds):
#   HealthCheckProgram=/opt/commbench/slurm/healthcheck.sh
#   HealthCheckInterval=300
#   a failed check drains the node with the reason "commbench: ...".
# As Prolog (slurm.conf: Prolog=/opt/commbench/slurm/healthcheck.sh): a failed check exits
#   1, and Slurm itself drains the node and requeues the job.
# By hand: drains like the health check (COMMBENCH_HEALTHCHECK_DRAIN=0: only reports);
# in a job step: says what it found and exits 1 if a check failed.
#
# What to expect is set in the environment, or in /etc/default/commbench-healthcheck
# (sourced when present; slurmd does not pass its own environment to these scripts):
#   COMMBENCH_EXPECTED_GPUS     GPUs `nvidia-smi -L` must list (unset: not checked)
#   COMMBENCH_EXPECTED_IB_PORTS ACTIVE InfiniBand ports (unset: not checked)
#   COMMBENCH_EXPECTED_IB_RATE  Gb/s every ACTIVE port must run at, e.g. 400 (unset: not checked)
#   COMMBENCH_SYSFS             sysfs root to read (default /sys; tests point it elsewhere)
set -uo pipefail

# shellcheck source=/dev/null
[ -r /etc/default/commbench-healthcheck ] && . /etc/default/commbench-healthcheck
sysfs="${COMMBENCH_SYSFS:-/sys}"
node="$(hostname -s)"
problems=()

if [ -n "${COMMBENCH_EXPECTED_GPUS:-}" ]; then
  gpus=0
  if command -v nvidia-smi >/dev/null 2>&1; then
    gpus="$(timeout 10 nvidia-smi -L 2>/dev/null | grep -c '^GPU ')"
  fi
  [ "$gpus" -eq "$COMMBENCH_EXPECTED_GPUS" ] || problems+=("$gpus GPUs visible, expected $COMMBENCH_EXPECTED_GPUS")
fi

if [ -n "${COMMBENCH_EXPECTED_IB_PORTS:-}${COMMBENCH_EXPECTED_IB_RATE:-}" ]; then
  active=0
  for port in "$sysfs"/class/infiniband/*/ports/*; do
    [ -r "$port/state" ] || continue
    name="$(basename "$(dirname "$(dirname "$port")")")/$(basename "$port")"
    # state reads "4: ACTIVE"; rate reads "400 Gb/sec (4X NDR)".
    case "$(cat "$port/state")" in *ACTIVE*) ;; *) continue ;; esac
    active=$((active + 1))
    rate="$(cut -d' ' -f1 < "$port/rate" 2>/dev/null)"
    if [ -n "${COMMBENCH_EXPECTED_IB_RATE:-}" ] && [ "${rate:-0}" != "$COMMBENCH_EXPECTED_IB_RATE" ]; then
      problems+=("$name runs at ${rate:-?} Gb/s, expected $COMMBENCH_EXPECTED_IB_RATE")
    fi
  done
  if [ -n "${COMMBENCH_EXPECTED_IB_PORTS:-}" ] && [ "$active" -ne "$COMMBENCH_EXPECTED_IB_PORTS" ]; then
    problems+=("$active InfiniBand ports ACTIVE, expected $COMMBENCH_EXPECTED_IB_PORTS")
  fi
fi

if [ ${#problems[@]} -eq 0 ]; then
  echo "commbench healthcheck $node: ok"
  exit 0
fi
reason="commbench: $(IFS=';'; echo "${problems[*]}")"
echo "commbench healthcheck $node: FAIL ${problems[*]}" >&2
# HealthCheckProgram runs outside any job and must drain the node itself; a prolog's
# failure is drained by Slurm, and a check run by hand only reports.
if [ -z "${SLURM_JOB_ID:-}" ] && [ -z "${SLURM_SCRIPT_CONTEXT:-}" ] && [ "${COMMBENCH_HEALTHCHECK_DRAIN:-1}" = 1 ] &&
   command -v scontrol >/dev/null 2>&1; then
  timeout 10 scontrol update NodeName="$node" State=DRAIN Reason="$reason" ||
    echo "commbench healthcheck $node: could not drain the node" >&2
fi
exit 1
