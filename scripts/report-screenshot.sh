#!/usr/bin/env bash
# Renders a `specc report` page in headless Chromium (Debian's `chromium` package) to a PNG:
#   scripts/report-screenshot.sh REPORT.html OUT.png [WIDTH] [HEIGHT]
# The page is self-contained (inline SVG, no script, nothing fetched), so the screenshot shows
# exactly what a browser shows. Chromium runs with no network: --proxy-server points nowhere
# it could reach and the page has no external reference anyway.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 REPORT.html OUT.png [WIDTH] [HEIGHT]" >&2
    exit 2
fi
html=$(realpath "$1")
out=$(realpath -m "$2")
width=${3:-1520}
height=${4:-1800}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
    echo "no chromium: apt-get install chromium" >&2
    exit 2
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$profile" --no-first-run --disable-extensions \
    --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>' \
    --window-size="$width,$height" --screenshot="$out" "file://$html" >/dev/null 2>&1
test -s "$out"
echo "$out"
