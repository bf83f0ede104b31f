#!/usr/bin/env bats
# The command table: help, --version, unknown commands and options.
load helpers

@test "--version prints the version" {
	hs --version
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^heapscope\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "help lists the commands" {
	hs help
	[ "$status" -eq 0 ]
	[[ "$output" == *"help "* ]]
}

@test "help COMMAND and COMMAND --help show the same usage" {
	hs help help
	[ "$status" -eq 0 ]
	local a="$output"
	hs help --help
	[ "$status" -eq 0 ]
	[ "$output" = "$a" ]
	[[ "$a" == usage:* ]]
}

@test "an unknown command is a usage error" {
	hs frobnicate
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'frobnicate' is not a heapscope command"* ]]
}

@test "an unknown global option is a usage error" {
	hs --frobnicate
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"unknown option '--frobnicate'"* ]]
}

@test "no command is a usage error with the command list" {
	hs
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"commands:"* ]]
}

@test "help of an unknown command is a usage error" {
	hs help frobnicate
	[ "$status" -eq 2 ]
}
