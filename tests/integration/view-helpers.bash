# Helpers for the tests that ask one `heapscope view` server, started
# once per file, for its API: view_start in setup_file, view_stop in
# teardown_file, view_setup in setup; then get and same.

load helpers

# view_start FILE...: in $BATS_FILE_TMPDIR, serve FILE... on a free port;
# writes view.pid, base (http://127.0.0.1:PORT) and cookie (NAME=TOKEN).
view_start() {
	cd "$BATS_FILE_TMPDIR" || return 1
	# emptied before the start: an earlier server's URL would pass for this one's
	: > view.out
	"$HS_BIN" view "$@" --no-browser --port 0 > view.out 2> view.err &
	echo $! > view.pid
	# an open reads the first source whole before serving: seconds for a
	# big trace in a sanitizer build on a busy machine
	for _ in $(seq 1200); do
		grep -q 'http://' view.out && break
		kill -0 "$(cat view.pid)" 2>/dev/null || break
		sleep 0.05
	done
	url=$(grep -o 'http://[^ ]*' view.out)
	echo "${url%%/\?token=*}" > base
	echo "hs_token_$(sed 's/.*://' base)=${url##*token=}" > cookie
}

view_stop() {
	cd "$BATS_FILE_TMPDIR" || return 0
	kill -TERM "$(cat view.pid)" 2>/dev/null || true
}

# view_setup: each test in $BATS_FILE_TMPDIR with BASE and COOKIE set.
view_setup() {
	cd "$BATS_FILE_TMPDIR" || return 1
	BASE=$(cat base)
	COOKIE=$(cat cookie)
}

# get PATH [ARG=VALUE...]: GET PATH with the arguments, the body in $output.
get() {
	local path=$1 a
	shift
	local q=()
	for a in "$@"; do
		q+=(--data-urlencode "$a")
	done
	output=$(curl -s -G -b "$COOKIE" "${q[@]}" "$BASE$path")
}

# same FILE TRACE [report options as ARG=VALUE...]: /api/view equals report
# (whose stderr goes to cli.err).
same() {
	local file=$1 trace=$2 a k
	shift 2
	local opts=()
	for a in "$@"; do
		k=${a%%=*}
		opts+=("--${k//_/-}" "${a#*=}")
	done
	get /api/view "trace=$trace" "$@"
	printf '%s\n' "$output" > api.json
	"$HS_BIN" report "$file" "${opts[@]}" --format json > cli.json 2> cli.err
	diff -u cli.json api.json
}
