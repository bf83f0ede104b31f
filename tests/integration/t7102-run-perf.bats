#!/usr/bin/env bats
# heapscope run --perf: perf record and perf script run for the user with
# the commands of docs/perf.md, into a file `report` reads. A fake perf on
# the PATH (fake_perf) shows the commands run and the case of no sample.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	SPINNER="$HS_BUILD/tests/targets/spinner"
	[ -x "$SPINNER" ] || skip "test target $SPINNER not built"
	cd "$BATS_TEST_TMPDIR"
}

# fake_perf: put a fake perf first on the PATH. It logs each call to
# perf.log; `record` refuses the events named in $FAKE_PERF_REFUSE (as perf
# does a tracepoint it may not use or the kernel lacks), else writes its -o
# file and runs the program, whose exit status it returns; `script` prints
# the file $FAKE_PERF_SCRIPT, or nothing (perf recorded no sample).
fake_perf() {
	mkdir -p bin
	cat > bin/perf <<'EOF'
#!/bin/sh
echo "$*" >> perf.log
cmd=$1
shift
case $cmd in
record)
	out=
	while [ $# -gt 0 ]; do
		case $1 in
		-o) out=$2; shift ;;
		-e) case " ${FAKE_PERF_REFUSE:-} " in
		    *" $2 "*) echo "event syntax error: '$2'" >&2; exit 129 ;;
		    esac
		    shift ;;
		--) shift; break ;;
		esac
		shift
	done
	: > "$out"
	exec "$@" ;;
script)
	[ -z "${FAKE_PERF_SCRIPT:-}" ] || cat "$FAKE_PERF_SCRIPT" ;;
esac
EOF
	chmod +x bin/perf
	export PATH="$BATS_TEST_TMPDIR/bin:$PATH"
}

@test "run --perf: a clear error without perf" {
	run --separate-stderr env PATH=/nonexistent "$HS_BIN" run --perf -o p.txt -- \
		"$SPINNER" rounds 10
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"--perf needs perf, which is not on the PATH"* ]]
	[ ! -e p.txt ]
}

@test "run --perf: options that are the collector's are refused" {
	hs run --perf --wall -- "$SPINNER" rounds 10
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--perf records with perf alone"* ]]
}

@test "run --perf: perf's samples, read by report" {
	command -v perf >/dev/null 2>&1 || skip "perf is not installed"
	perf record -q -o probe.data -- true >/dev/null 2>&1 ||
		skip "perf_event_open refused here"
	hs run --perf -o p.txt -- "$SPINNER" rounds 300
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"perf script output written to p.txt"* ]]
	[ ! -e p.txt.perf.data ]
	"$HS_BIN" report --format csv p.txt > p.csv
	grep -q '^spinner!hot_work,' p.csv
	# an existing output is never overwritten
	hs run --perf -o p.txt -- "$SPINNER" rounds 10
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"exists; not overwriting it"* ]]
}

@test "run --perf: the wakeups as sched_waking, or sched_wakeup where there is none" {
	fake_perf
	printf 'a 1/1 [000] 1.0: cpu-clock:\n\t1 f (/a)\n\n' > one.data.txt
	export FAKE_PERF_SCRIPT=one.data.txt
	hs run --perf -o p.txt -- true
	[ "$status" -eq 0 ]
	grep -q '^record .* -e sched:sched_switch -e sched:sched_waking .* -- true$' perf.log
	! grep -q 'sched_wakeup' perf.log || false
	grep -q '^script .*,trace ' perf.log
	[[ "$stderr" == *"look at it with: heapscope report p.txt (and --source thread-time)"* ]]
	[[ "$stderr" != *"no sched:sched_waking"* ]]
	# a kernel before 4.3
	rm -f p.txt perf.log
	FAKE_PERF_REFUSE=sched:sched_waking hs run --perf -o p.txt -- true
	[ "$status" -eq 0 ]
	grep -q '^record .* -e sched:sched_switch -e sched:sched_wakeup .* -- true$' perf.log
	[[ "$stderr" == *"perf has no sched:sched_waking here, so the wakeups are sched:sched_wakeup's"* ]]
	# no tracepoints at all: CPU samples only
	rm -f p.txt perf.log
	FAKE_PERF_REFUSE='sched:sched_switch' hs run --perf -o p.txt -- true
	[ "$status" -eq 0 ]
	grep -q '^record -g --sample-cpu -F 999 -o p.txt.perf.data -- true$' perf.log
	[[ "$stderr" == *"look at it with: heapscope report p.txt" ]]
}

@test "run --perf: no sample recorded: says so and why, writes no file, the program's status" {
	fake_perf
	# an unprivileged user: no tracepoints, and a program that sleeps
	FAKE_PERF_REFUSE='sched:sched_switch' hs run --perf -o p.txt -- sh -c 'exit 3'
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"perf recorded no sample of sh (perf script printed nothing; p.txt not written)"* ]]
	[[ "$stderr" == *"sh probably ran for less than a sampling period (1/999 s)"* ]]
	[[ "$stderr" == *"needs the scheduler's tracepoints, which perf may not record here (they need root, or kernel.perf_event_paranoid at -1"* ]]
	[[ "$stderr" != *"heapscope report"* ]]
	[ ! -e p.txt ]
	[ ! -e p.txt.perf.data ]
	# with the tracepoints (and --cpu=HZ): only the first part
	hs run --perf --cpu=50 -q -o p.txt -- true
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"perf recorded no sample of true"* ]]
	[[ "$stderr" == *"(1/50 s)"* ]]
	[[ "$stderr" != *"tracepoints"* ]]
	[ ! -e p.txt ]
	# comments and blank lines are no event either
	printf '# perf script\n\n  \n' > comments.data.txt
	FAKE_PERF_SCRIPT=comments.data.txt hs run --perf -o p.txt -- true
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"perf recorded no sample of true"* ]]
	[ ! -e p.txt ]
}
