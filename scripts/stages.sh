# shellcheck shell=bash
# Stages of a test script (sourced by scripts/test and scripts/test-with-rdma-dev):
#
#   stage "what it shows" COMMAND ARGS...   runs the command; a failure is recorded, not fatal
#   stage_skipped "what it shows" "why"     records a stage that did not run
#   stages_summary                          prints one line per stage; returns 1 if any failed
#
# Each stage prints its title before and its result with its wall time after, so a slow
# stage shows in the log as it ends, and the summary lists every failure at the end.

stage_names=()
stage_results=()
stage_times=()

# Seconds as "1m 05s" (or "42s").
stage_duration() {
	local s=$1
	if ((s >= 60)); then
		printf '%dm %02ds' $((s / 60)) $((s % 60))
	else
		printf '%ds' "$s"
	fi
}

stage() {
	local name=$1
	shift
	echo "== $name"
	local start=$SECONDS result=ok
	"$@" || result=FAILED
	local took=$((SECONDS - start))
	echo "== $result in $(stage_duration "$took"): $name"
	stage_names+=("$name")
	stage_results+=("$result")
	stage_times+=("$took")
}

stage_skipped() {
	echo "== skipped ($2): $1"
	stage_names+=("$1")
	stage_results+=("skipped")
	stage_times+=(0)
}

stages_summary() {
	local i failed=0 total=0
	echo "== summary"
	for i in "${!stage_names[@]}"; do
		printf '%-8s %8s  %s\n' "${stage_results[i]}" "$(stage_duration "${stage_times[i]}")" \
			"${stage_names[i]}"
		total=$((total + stage_times[i]))
		[[ ${stage_results[i]} != FAILED ]] || failed=$((failed + 1))
	done
	if ((failed)); then
		echo "== $failed of ${#stage_names[@]} stages FAILED ($(stage_duration "$total") in all)"
		return 1
	fi
	echo "== all ${#stage_names[@]} stages passed or were skipped ($(stage_duration "$total") in all)"
}
