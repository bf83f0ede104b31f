# trace-check.awk - the allocations of a test target's trace, per call site,
# in the form of the target's "expect" lines (tests/targets/target.h).
#
#   awk -f trace-check.awk TARGET_STDOUT EVENTS
#
# TARGET_STDOUT holds the target's "sym" lines; EVENTS is the output of
# `heapscope dump --events`. Allocations (and mmaps) whose innermost frame
# in the target's functions is a site_* function are counted by
# (function, size, stack), the stack being the target's functions,
# outermost first; frees (and munmaps) are counted under the allocation
# they free.

function hex(s,    i, v) {
	v = 0
	s = tolower(s)
	sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}

# The target function holding FRAME ("MODULE!0xOFFSET"), or "".
function name_of(frame,    k, mod, off, i) {
	if (frame in memo)
		return memo[frame]
	memo[frame] = ""
	k = index(frame, "!")
	if (!k)
		return ""
	mod = substr(frame, 1, k - 1)
	off = hex(substr(frame, k + 1))
	for (i = 1; i <= nsym; i++)
		if (smod[i] == mod && off >= slo[i] && off < shi[i]) {
			memo[frame] = sname[i]
			break
		}
	return memo[frame]
}

FNR == NR {
	if ($1 == "sym") {
		nsym++
		sname[nsym] = $2
		smod[nsym] = $3
		slo[nsym] = hex($4)
		shi[nsym] = hex($5)
	}
	next
}

{
	op = $3; fn = $4; addr = $5; size = $6; stack = $7
	if (op == "alloc" || op == "mmap") {
		delete live[addr]
		n = split(stack, fr, ";")
		names = ""
		nm = ""
		for (i = 1; i <= n; i++) {
			nm = name_of(fr[i])
			if (nm != "") {
				names = names (names == "" ? "" : ";") nm
				last = nm
			}
		}
		if (names == "" || last !~ /^site_/)
			next
		key = fn " " size " " names
		count[op " " key]++
		live[addr] = key
	} else if (op == "free" || op == "munmap") {
		if (addr in live) {
			count[op " " live[addr]]++
			delete live[addr]
		}
	}
}

END {
	for (k in count) {
		split(k, a, " ")
		print "expect " a[1] " " a[2] " " a[3] " " count[k] " " a[4]
	}
}
