#!/usr/bin/env bats
# `heapscope run` of .NET programs: their runtime events recorded through
# a diagnostic port of heapscope's own (the runtime suspended until the
# session is on), on the program of tests/targets/dotnet, whose
# allocations are known. Skipped where the .NET SDK (dotnet) is not
# installed.
load dotnet-helpers

@test "run --dotnet: gc-alloc with the types, LargeObject and the method names" {
	run --separate-stderr "$HS_BIN" run --no-view -o r.heapscope -- dotnet out/allocs.dll 2
	[ "$status" -eq 0 ]
	echo "$output" > r.truth
	[ "$(truth caught r.truth)" = 1 ]
	[[ "$stderr" == *"runtime events written to r.nettrace"* ]]
	[ -s r.heapscope ]
	check_gc_alloc r.nettrace r.truth
	# the rundown at shutdown names the precompiled framework code too
	grep -q '^"System.Private.CoreLib!System.String.Ctor(wchar,int32)",' r.nettrace.csv
	"$HS_BIN" report r.nettrace --source events:Microsoft-Windows-DotNETRuntime/Exception/Start \
		--view byname --format csv > e.csv
	[ "$(col 'allocs!Allocs.Program.ThrowNullReference()' 7 e.csv)" = 1 ]
}

@test "run: an apphost is recognised, and the runtime's signals work under --cpu" {
	run --separate-stderr "$HS_BIN" run --no-view --cpu -o c.heapscope -- out/allocs 1
	[ "$status" -eq 0 ]
	echo "$output" > c.truth
	# the NullReferenceException (SIGSEGV in the runtime) was caught
	[ "$(truth caught c.truth)" = 1 ]
	[ -s c.nettrace ]
	check_gc_alloc c.nettrace c.truth
	"$HS_BIN" report c.heapscope --source cpu --view byname --format csv > cpu.csv
	[ "$(wc -l < cpu.csv)" -gt 2 ]
}

@test "run: an apphost without its runtimeconfig beside it is known by its bundle marker" {
	# alone, it fails before its runtime starts: run waited for it in vain
	mkdir -p lone
	cp out/allocs lone/
	hs run --no-view -o lone/l.heapscope -- lone/allocs 1
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"the program never connected to the diagnostic port"* ]]
}

@test "run --no-dotnet records the heap alone" {
	run --separate-stderr "$HS_BIN" run --no-view --no-dotnet -o n.heapscope -- out/allocs 1
	[ "$status" -eq 0 ]
	[ -s n.heapscope ]
	[ ! -e n.nettrace ]
}

@test "run --providers replaces a default provider" {
	# the runtime's GC keyword alone: allocation ticks, no exception events
	run --separate-stderr "$HS_BIN" run --no-view -o p.heapscope \
		--providers 'Microsoft-Windows-DotNETRuntime:0x40000001:5' -- dotnet out/allocs.dll 1
	[ "$status" -eq 0 ]
	echo "$output" > p.truth
	check_gc_alloc p.nettrace p.truth
	run --separate-stderr "$HS_BIN" report p.nettrace --source events --view byname --format csv
	[[ "$output" != *ThrowNullReference* ]]
}

@test "run: usage errors of --dotnet and --providers" {
	hs run --providers 'X:zz' -- dotnet out/allocs.dll
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--providers: keywords 'zz' are not a hexadecimal number"* ]]
	hs run --providers 'X' -- /bin/true
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"--providers is for a .NET program (--dotnet)"* ]]
	hs run --dotnet --perf -- /bin/true
	[ "$status" -eq 2 ]
}

@test "run --dotnet on a program that is not .NET says nothing was recorded" {
	hs run --no-view --dotnet -o t.heapscope -- /bin/true
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"never connected to the diagnostic port"* ]]
	[ ! -e t.nettrace ]
}

@test "run --dotnet of a script records the first .NET process it starts" {
	run --separate-stderr "$HS_BIN" run --no-view --dotnet -o s.heapscope -- \
		sh -c 'dotnet out/allocs.dll 1; status=$?; exit $status'
	[ "$status" -eq 0 ]
	echo "$output" > s.truth
	[ "$(truth caught s.truth)" = 1 ]
	check_gc_alloc s.nettrace s.truth
}
