#!/usr/bin/env bash
# Makes sure the programs the service and its tests shell out to are
# present: ffmpeg/ffprobe render and check the videos, drawtext needs the
# DejaVu font; the test suite also runs Amazon's DynamoDB Local (Java),
# Node tools from npm (the ASL validator, the local Step Functions and
# Playwright) and Debian's Chromium (the playground's browser test). With
# --run only what `make run` needs is checked; with --bench, besides the
# suite's, wrk, which `make bench` measures with (never needed by make run
# or make test). As root with apt-get it
# installs what is missing; otherwise it says what to run.
set -euo pipefail

missing=()
command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
command -v ffprobe >/dev/null 2>&1 || missing+=(ffmpeg)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing+=(fonts-dejavu-core)
if [ "${1:-}" != "--run" ]; then
	command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
	command -v npm >/dev/null 2>&1 || missing+=(npm)
	[ -x /usr/bin/chromium ] || missing+=(chromium)
	# The README walk-through test runs the walk-through as a reader does.
	command -v curl >/dev/null 2>&1 || missing+=(curl)
fi
if [ "${1:-}" = "--bench" ]; then
	command -v wrk >/dev/null 2>&1 || missing+=(wrk)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

pkgs=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "Installing ${pkgs}(Debian packages) ..." >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${pkgs} >/dev/null
	exit 0
fi
cat >&2 <<MSG
gen needs these Debian packages, which are not installed: ${pkgs}
Install them with:

    sudo apt-get update && sudo apt-get install -y ${pkgs}

then run the make target again.
MSG
exit 1
