#!/usr/bin/env bats
# heapscope run --cpu: CPU samples in heapscope's own trace, the `cpu`
# source.
#
# Tolerances come from the number of samples, not from wall time, so a
# loaded machine only makes the runs longer:
#  - a share p measured from N samples is within 4 standard deviations of
#    a binomial, 4 * sqrt(p (1 - p) / N), plus 0.03 for what the program
#    does besides the two functions (loop and call overhead);
#  - a thread's CPU samples add up to the CPU time it used between its
#    start and its last sample: that sum is within 10% + 10 ms of the CPU
#    time the program spent (the tail after the last sample is lost).

bats_require_minimum_version 1.5.0
load helpers

setup() {
	SPINNER="$HS_BUILD/tests/targets/spinner"
	[ -x "$SPINNER" ] || skip "test target $SPINNER not built"
	cd "$BATS_TEST_TMPDIR"
}

@test "run --cpu: a function doing 75% of the work gets 75% of the samples" {
	hs run -q --no-view --cpu --no-heap -o h.hs -- "$SPINNER" share 800
	[ "$status" -eq 0 ]
	"$HS_BIN" report --source cpu --format csv h.hs > h.csv 2>/dev/null
	hot=$(col 'spinner!hot_work' 7 h.csv)
	cold=$(col 'spinner!cold_work' 7 h.csv)
	n=$((hot + cold))
	echo "hot $hot cold $cold samples"
	[ "$n" -ge 100 ]
	share=$(awk -v h="$hot" -v n="$n" 'BEGIN { print h / n }')
	tol=$(awk -v n="$n" 'BEGIN { print 4 * sqrt(0.75 * 0.25 / n) + 0.03 }')
	between "$share" "$(awk -v t="$tol" 'BEGIN { print 0.75 - t }')" \
		"$(awk -v t="$tol" 'BEGIN { print 0.75 + t }')"
	# the metric is CPU time: both functions' ms share alike
	hms=$(col 'spinner!hot_work' 6 h.csv)
	cms=$(col 'spinner!cold_work' 6 h.csv)
	between "$(awk -v h="$hms" -v c="$cms" 'BEGIN { print h / (h + c) }')" \
		"$(awk -v t="$tol" 'BEGIN { print 0.75 - t }')" \
		"$(awk -v t="$tol" 'BEGIN { print 0.75 + t }')"
}

@test "run --cpu: a thread started late is sampled, its samples add up to its CPU time" {
	hs run -q --no-view --cpu --no-heap -o late.hs -- "$SPINNER" late 400
	[ "$status" -eq 0 ]
	"$HS_BIN" report --source cpu --format csv late.hs > late.csv 2>/dev/null
	grep -q '^Thread ([0-9]*) late,' late.csv
	ms=$(col 'spinner!late_spin' 6 late.csv)
	between "$ms" 350 450
	[ "$(col 'spinner!late_spin' 7 late.csv)" -ge 20 ]
}

@test "run --cpu --no-heap: the trace holds samples and no heap event" {
	hs run -q --no-view --cpu --no-heap -o nh.hs -- "$SPINNER" late 100
	[ "$status" -eq 0 ]
	"$HS_BIN" dump nh.hs > nh.txt
	grep -q '^sampling .*cpu_hz=999 wall_hz=0 .*flags=1' nh.txt
	grep -q '^sample .*kind=cpu' nh.txt
	! grep -Eq '^(malloc|calloc|realloc|free|mmap|munmap|mremap) ' nh.txt
	grep -q '^sampling-end .* dropped=0 ' nh.txt
}

@test "run --cpu with heap tracing: both in one trace" {
	hs run -q --no-view --cpu -o both.hs -- "$SPINNER" late 100
	[ "$status" -eq 0 ]
	"$HS_BIN" dump both.hs > both.txt
	grep -q '^sample .*kind=cpu' both.txt
	grep -Eq '^(malloc|calloc) ' both.txt
	"$HS_BIN" report --source cpu --format csv both.hs > both.csv 2>/dev/null
	grep -q '^spinner!late_spin,' both.csv
}

@test "run --cpu: the program's own SIGPROF timer counts the same" {
	# ITIMER_PROF every 20 ms of CPU time, 400 ms of it: about 20 signals.
	# The kernel's count varies from run to run on a loaded machine (20 to
	# 28 seen), so the two runs are compared with each other: the traced
	# one within half and twice the one alone, per ms of CPU (a program
	# whose signals were taken or lost would be far outside).
	run "$SPINNER" prof 400
	[ "$status" -eq 0 ]
	read -r _ alone alone_ms <<< "$output"
	hs run -q --no-view --cpu --no-heap -o prof.hs -- "$SPINNER" prof 400
	[ "$status" -eq 0 ]
	read -r _ traced traced_ms <<< "$output"
	echo "alone $alone signals in $alone_ms ms, traced $traced in $traced_ms ms"
	[ "$alone" -ge 10 ]
	between "$(awk -v a="$alone" -v am="$alone_ms" -v t="$traced" -v tm="$traced_ms" \
		'BEGIN { print (t / tm) / (a / am) }')" 0.5 2
	# and the collector sampled it meanwhile
	"$HS_BIN" report --source cpu --format csv prof.hs > prof.csv 2>/dev/null
	[ "$(col 'spinner!spin_cpu' 7 prof.csv)" -ge 20 ]
}

@test "run --cpu: a program taking the sampling signal gets it, sampling goes on" {
	hs run -q --no-view --cpu --no-heap -o rt.hs -- "$SPINNER" rtsig 300
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "before default" ]
	[ "${lines[1]}" = "rtsig 300 300" ]
	"$HS_BIN" report --source cpu --format csv rt.hs > rt.csv 2>/dev/null
	[ "$(col 'spinner!rt_spin' 7 rt.csv)" -ge 20 ]
}

@test "run --cpu --wall: threads that block every signal are sampled, sigwait() gets only the program's" {
	hs run -q --no-view --cpu --wall --no-heap -o sw.hs -- "$SPINNER" sigwait 300
	[ "$status" -eq 0 ]
	[ "$output" = "got 10" ]
	"$HS_BIN" report --source cpu --format csv sw.hs > sw.csv 2>/dev/null
	[ "$(col 'spinner!masked_spin' 7 sw.csv)" -ge 20 ]
	"$HS_BIN" dump sw.hs | grep -q '^sampling-end .* dropped=0 '
}

@test "run --cpu --follow-fork: a followed child is sampled into its own trace" {
	mkdir fk && cd fk
	hs run -q --no-view --cpu --no-heap --follow-fork -o parent.hs -- "$SPINNER" fork 300
	[ "$status" -eq 0 ]
	child=$(ls spinner.*.heapscope)
	"$HS_BIN" symbolize -q "$child"
	"$HS_BIN" report --source cpu --format csv "$child" > child.csv 2>/dev/null
	between "$(col 'spinner!child_spin' 6 child.csv)" 260 340
	"$HS_BIN" dump "$child" | grep -q '^sampling .*cpu_hz=999'
}

@test "run --cpu: options are checked" {
	hs run --no-heap -- true
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--no-heap needs --cpu or --wall"* ]]
	hs run --cpu=0 -- true
	[ "$status" -eq 2 ]
	hs run --wall=abc -- true
	[ "$status" -eq 2 ]
}
