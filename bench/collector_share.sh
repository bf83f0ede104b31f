#!/bin/sh
# collector_share.sh - what share of a traced run's CPU time the collector
# itself takes, from a profile of the run (perf record, CPU clock at 4 kHz,
# no call graphs): a figure that does not drift with the machine's speed,
# as the difference of two timings on a shared machine does.
#
#   bench/collector_share.sh PERF_DATA heapscope run ... -- CMD ARGS
#
# Prints one line:
#   SHARE% (collector code PCT%, collector threads PCT%, heapscope's own process PCT%)
# where the parts are the samples in libheapscope-preload.so on the
# program's threads, on the collector's threads (named heapscope, in the
# program's process: writer, sampler) and in the `heapscope run` process
# itself (start-up, waiting; with --no-symbolize and -q, nothing after the
# program), each over the program's own samples (everything else).
# What it cannot see: indirect costs (caches, the kernel's work for the
# collector's signals on the program's threads). Needs perf record.
set -eu
out=$1
shift
# The shell writes its pid and becomes `heapscope run`: that pid is the CLI.
perf record -q -F 4000 -e cpu-clock -o "$out" -- \
	sh -c 'echo $$ > "$0.pid"; exec "$@"' "$out" "$@" > /dev/null 2>&1
cli=$(cat "$out.pid")
rm -f "$out.pid"
perf script -i "$out" -F pid,tid,comm,ip,dso 2>/dev/null | awk -v cli="$cli" '
{
	split($2, id, "/")
	dso = $NF
	if (id[1] == cli)
		own++
	else if ($1 == "heapscope")
		threads++
	else if (dso ~ /libheapscope-preload\.so/)
		code++
	else
		prog++
}
END {
	if (!prog) { print "no samples of the program"; exit 1 }
	printf "%.2f%% (collector code %.2f%%, collector threads %.2f%%, heapscope'"'"'s own process %.2f%%)\n",
	       (code + threads + own) * 100 / prog, code * 100 / prog, threads * 100 / prog,
	       own * 100 / prog
}'
