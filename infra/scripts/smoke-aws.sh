#!/usr/bin/env bash
# Smoke test of a deployed stack, for an operator after `sam deploy`: what
# the tests cannot show without a real account (infra/docs/deploy.md,
# "What only a real account shows"). It checks, against the live API:
#
#   1. oversized uploads: a request over API Gateway's 10 MB is 413
#      FILE_TOO_LARGE; a direct upload of 20 MiB + 1 byte is refused by S3's
#      POST policy; a direct upload of 19 MiB goes through;
#   2. a revoked key: refused at once (401), its gateway key gone;
#   3. a generation end to end: text-to-video, and image-to-video from the
#      19 MiB upload, to completed, with a download URL that serves an MP4;
#   4. with --break-key-store only: the key store unreachable (a Deny on the
#      authorizer's role for a minute) answers 503 SERVICE_UNAVAILABLE with
#      Retry-After, not a 500. It disturbs new callers for that minute:
#      run it in a maintenance window;
#   5. a missing upload id: a start naming an upload that does not exist is
#      400 MISSING_IMAGE and charges nothing (S3 answers the start function
#      403 or 404, never a 503 "retry" to the client);
#   6. the throttle of one key does not touch another's: a burst that gets
#      one key 429s leaves a second key's request served;
#   8. the live events stream streams: its first event arrives seconds
#      before its last (response streaming through API Gateway works);
#   7. with --fresh-region REGION --layer ARN only: `sam deploy` of a new
#      stack (gen-smoke) in a region that never had an API Gateway resource
#      (the account setting must follow the API), the checks above against
#      it, then `sam delete`: it must succeed (the signing user's keys are
#      removed first), and the region's API Gateway CloudWatch role must
#      still exist afterwards. Run `sam build` first.
#
# It creates three keys (one revoked at once) on a new account with 1,000
# credits, spends about 100 of them, and leaves all of them revoked.
#
# Needs: aws (credentials of the deploying operator), curl, jq, go, python3,
# and sam for --fresh-region.
# Usage: infra/scripts/smoke-aws.sh [--stack gen] [--region us-east-1] [--break-key-store]
#        infra/scripts/smoke-aws.sh --fresh-region eu-south-2 --layer arn:aws:lambda:eu-south-2:...:layer:ffmpeg:1
set -euo pipefail

stack=gen
region=${AWS_REGION:-us-east-1}
break_store=false
fresh_region=
layer=
while [ $# -gt 0 ]; do
	case "$1" in
	--stack) stack=$2; shift 2 ;;
	--region) region=$2; shift 2 ;;
	--break-key-store) break_store=true; shift ;;
	--fresh-region) fresh_region=$2; shift 2 ;;
	--layer) layer=$2; shift 2 ;;
	*) echo "usage: $0 [--stack NAME] [--region REGION] [--break-key-store] [--fresh-region REGION --layer ARN]" >&2; exit 2 ;;
	esac
done
if [ -n "$fresh_region" ] && [ -z "$layer" ]; then
	echo "smoke: --fresh-region needs --layer, the ARN of the ffmpeg layer in that region" >&2
	exit 2
fi
for tool in aws curl jq go python3; do
	command -v "$tool" >/dev/null || { echo "smoke: $tool is not installed" >&2; exit 2; }
done

cd "$(dirname "$0")/../.."

# 7. A first deploy in a region that never had an API Gateway resource:
# the stack must create (ApiGatewayAccount after GenApi, the stage after
# the account); the checks below then run against it, and it is deleted
# at the end.
if [ -n "$fresh_region" ]; then
	command -v sam >/dev/null || { echo "smoke: sam is not installed" >&2; exit 2; }
	echo "== 7. a first deploy in $fresh_region"
	existing=$(aws apigateway get-rest-apis --region "$fresh_region" --query 'length(items)' --output text)
	[ "$existing" = 0 ] || echo "     (note: $fresh_region already has $existing REST APIs: not a first deploy there)"
	region=$fresh_region stack=gen-smoke
	if sam deploy --region "$region" --stack-name "$stack" --resolve-s3 --capabilities CAPABILITY_NAMED_IAM \
		--no-confirm-changeset --no-fail-on-empty-changeset \
		--parameter-overrides "FFmpegLayerArn=$layer"; then
		echo "ok   sam deploy in a fresh region"
	else
		echo "FAIL sam deploy in $fresh_region"
		exit 1
	fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

output() {
	aws cloudformation describe-stacks --region "$region" --stack-name "$stack" \
		--query "Stacks[0].Outputs[?OutputKey=='$1'].OutputValue" --output text
}
api=$(output ApiUrl)
export AWS_REGION=$region GEN_BACKEND=aws
GEN_TABLE_PREFIX=$(output TablePrefix)
GEN_USAGE_PLAN_STANDARD=$(output StandardUsagePlanId)
GEN_USAGE_PLAN_PRO=$(output ProUsagePlanId)
export GEN_TABLE_PREFIX GEN_USAGE_PLAN_STANDARD GEN_USAGE_PLAN_PRO
echo "smoke test of $stack in $region: $api"

genctl() { go run ./infra/genctl "$@"; }
key_json=$(genctl keys create --name "smoke $(date -u +%FT%TZ)" --credits 1000 --json)
key=$(jq -r .apiKey <<<"$key_json")
key_id=$(jq -r .keyId <<<"$key_json")
account=$(jq -r .accountId <<<"$key_json")
cleanup_key() { genctl keys revoke "$key_id" >/dev/null 2>&1 || true; }
trap 'cleanup_key; rm -rf "$tmp"' EXIT

# call METHOD PATH [curl args...]: prints the status, keeps the body and
# headers in $tmp/body and $tmp/headers.
call() {
	local method=$1 path=$2
	shift 2
	curl -sS -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' -X "$method" "$api$path" "$@"
}

# A PNG of about 19 MiB (noise, uncompressed): what API Gateway and Lambda
# cannot carry in a request, and the contract allows.
python3 - "$tmp/large.png" <<'EOF'
import os, struct, sys, zlib
w, h = 2880, 2306
raw = b"".join(b"\0" + os.urandom(w * 3) for _ in range(h))
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + \
    chunk(b"IDAT", zlib.compress(raw, 0)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
EOF

echo "== 1. oversized uploads"
head -c $((11 * 1000 * 1000)) /dev/urandom >"$tmp/11mb.bin"
status=$(call POST /api/gen/image-to-video -H "X-API-Key: $key" -F prompt=x -F "image=@$tmp/11mb.bin;type=image/png")
if [ "$status" = 413 ] && [ "$(jq -r .error "$tmp/body")" = FILE_TOO_LARGE ]; then
	pass "a request over 10 MB: 413 FILE_TOO_LARGE"
else
	fail "a request over 10 MB: $status $(cat "$tmp/body")"
fi
head -c $((6 * 1024 * 1024)) /dev/urandom >"$tmp/6mib.bin"
status=$(call POST /api/gen/image-to-video -H "X-API-Key: $key" -F prompt=x -F "image=@$tmp/6mib.bin;type=image/png")
echo "     (a request of 6 MiB, between the function's limit and API Gateway's: $status $(head -c 200 "$tmp/body"))"

sign_upload() {
	status=$(call POST /api/gen/uploads -H "X-API-Key: $key" -H 'Content-Type: application/json' -d '{"contentType":"image/png"}')
	[ "$status" = 201 ] || { fail "POST /api/gen/uploads: $status $(cat "$tmp/body")"; return 1; }
	cp "$tmp/body" "$tmp/upload.json"
}
# post_upload FILE: sends the signed form and FILE to S3; prints the status.
post_upload() {
	local args=()
	while IFS= read -r kv; do args+=(-F "$kv"); done < <(jq -r '.fields | to_entries[] | "\(.key)=\(.value)"' "$tmp/upload.json")
	curl -sS -o "$tmp/s3body" -w '%{http_code}' "${args[@]}" -F "file=@$1;type=image/png" "$(jq -r .uploadUrl "$tmp/upload.json")"
}
head -c $((20 * 1024 * 1024 + 1)) /dev/zero >"$tmp/over.bin"
if sign_upload; then
	status=$(post_upload "$tmp/over.bin")
	if [ "$status" = 400 ] && grep -q EntityTooLarge "$tmp/s3body"; then
		pass "a direct upload of 20 MiB + 1 byte: refused by S3 (EntityTooLarge)"
	else
		fail "a direct upload of 20 MiB + 1 byte: $status $(cat "$tmp/s3body")"
	fi
fi
upload_id=
if sign_upload; then
	status=$(post_upload "$tmp/large.png")
	if [ "$status" = 204 ]; then
		upload_id=$(jq -r .uploadId "$tmp/upload.json")
		pass "a direct upload of $(stat -c %s "$tmp/large.png") bytes: 204"
	else
		fail "a direct upload of 19 MiB: $status $(cat "$tmp/s3body")"
	fi
fi

echo "== 2. a revoked key"
revoked_json=$(genctl keys create --name "smoke revoked" --credits 0 --json)
revoked=$(jq -r .apiKey <<<"$revoked_json")
status=$(call GET /api/gen/models -H "X-API-Key: $revoked")
[ "$status" = 200 ] || fail "a fresh key: GET /api/gen/models = $status $(cat "$tmp/body")"
genctl keys revoke "$(jq -r .keyId <<<"$revoked_json")"
status=$(call GET /api/gen/models -H "X-API-Key: $revoked")
if [ "$status" = 401 ] && [ "$(jq -r .error "$tmp/body")" = UNAUTHORIZED ]; then
	pass "a revoked key, at once (the authorizer's answer is still cached): 401 UNAUTHORIZED"
else
	fail "a revoked key: $status $(cat "$tmp/body")"
fi
gateway_keys=$(aws apigateway get-api-keys --region "$region" --name-query "gen-usage-$(jq -r .keyId <<<"$revoked_json")" --query 'length(items)')
[ "$gateway_keys" = 0 ] && pass "its gateway API key is deleted" || fail "its gateway API key is still there ($gateway_keys)"

echo "== 3. generations end to end"
# wait_task ID: polls the status until the task ends; prints its status.
wait_task() {
	for _ in $(seq 1 120); do
		call GET "/api/gen/status/$1" -H "X-API-Key: $key" >/dev/null
		case "$(jq -r .status "$tmp/body")" in
		completed | failed) jq -r .status "$tmp/body"; return ;;
		esac
		sleep 5
	done
	echo timeout
}
check_video() {
	status=$(call GET "/api/gen/download/$1" -H "X-API-Key: $key")
	url=$(jq -r '.videos[0].url' "$tmp/body")
	curl -sS -o "$tmp/video.mp4" "$url"
	if [ "$status" = 200 ] && [ "$(head -c 8 "$tmp/video.mp4" | tail -c 4)" = ftyp ]; then
		pass "$2: completed, and its download URL serves an MP4"
	else
		fail "$2: download $status, $(stat -c %s "$tmp/video.mp4") bytes"
	fi
}
status=$(call POST /api/gen/text-to-video -H "X-API-Key: $key" -H 'Content-Type: application/json' \
	-d '{"prompt":"smoke test: a paper boat on a pond","model":"gen-3.1-lite-generate-001","durationSeconds":4}')
if [ "$status" = 202 ]; then
	task=$(jq -r .taskId "$tmp/body")
	# 8. The live events stream really streams (API Gateway's response
	# streaming): its first event reaches the client while the task runs,
	# seconds before its last, not buffered until the stream ends. Each
	# line is stamped as it arrives.
	(curl -sS -N --max-time 900 -H "X-API-Key: $key" -H 'Accept: text/event-stream' "$api/api/gen/status/$task/events" |
		while IFS= read -r line; do printf '%s %s\n' "$(date +%s)" "$line"; done >"$tmp/events") &
	stream_pid=$!
	[ "$(wait_task "$task")" = completed ] && check_video "$task" "text-to-video $task" || fail "text-to-video $task did not complete: $(cat "$tmp/body")"
	wait "$stream_pid" || true
	first=$(grep -m1 ' event: ' "$tmp/events" | cut -d' ' -f1)
	last=$(grep ' event: ' "$tmp/events" | tail -n 1 | cut -d' ' -f1)
	if [ -n "$first" ] && grep -q ' event: completed' "$tmp/events" && [ $((last - first)) -ge 2 ]; then
		pass "the live events stream streams: its first event came $((last - first)) s before its last"
	else
		fail "the live events stream: events $(grep -c ' event: ' "$tmp/events") , first at ${first:-none}, last at ${last:-none} (buffered, or no completed event)"
	fi
else
	fail "text-to-video: $status $(cat "$tmp/body")"
fi
if [ -n "$upload_id" ]; then
	status=$(call POST /api/gen/image-to-video -H "X-API-Key: $key" -F "prompt=smoke test: noise settles" \
		-F model=gen-3.1-lite-generate-001 -F durationSeconds=4 -F "imageUploadId=$upload_id")
	if [ "$status" = 202 ]; then
		task=$(jq -r .taskId "$tmp/body")
		[ "$(wait_task "$task")" = completed ] && check_video "$task" "image-to-video of the 19 MiB upload $task" ||
			fail "image-to-video $task did not complete: $(cat "$tmp/body")"
	else
		fail "image-to-video with the upload: $status $(cat "$tmp/body")"
	fi
fi

if $break_store; then
	echo "== 4. the key store unreachable"
	role=$(aws lambda get-function-configuration --region "$region" \
		--function-name "$(aws cloudformation describe-stack-resource --region "$region" --stack-name "$stack" \
			--logical-resource-id AuthorizerFunction --query StackResourceDetail.PhysicalResourceId --output text)" \
		--query Role --output text)
	role=${role##*/}
	aws iam put-role-policy --role-name "$role" --policy-name smoke-deny-keys --policy-document \
		'{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"dynamodb:*","Resource":"*"}]}'
	trap 'aws iam delete-role-policy --role-name "$role" --policy-name smoke-deny-keys || true; cleanup_key; rm -rf "$tmp"' EXIT
	sleep 30 # IAM is eventually consistent
	# A well-formed key the authorizer has never seen: not in its cache.
	fresh="gen_$(head -c 64 /dev/urandom | base64 | tr -dc A-Za-z0-9 | head -c 43)"
	status=$(call GET /api/gen/models -H "X-API-Key: $fresh")
	if [ "$status" = 503 ] && [ "$(jq -r .error "$tmp/body")" = SERVICE_UNAVAILABLE ] && grep -qi '^retry-after:' "$tmp/headers"; then
		pass "the key store unreachable: 503 SERVICE_UNAVAILABLE with Retry-After"
	else
		fail "the key store unreachable: $status $(cat "$tmp/body")"
	fi
	aws iam delete-role-policy --role-name "$role" --policy-name smoke-deny-keys
fi

echo "== 5. a missing upload id"
before=$(genctl credits show --account "$account" --json 2>/dev/null | jq -r ".credits // .Credits" || true)
status=$(call POST /api/gen/image-to-video -H "X-API-Key: $key" -F "prompt=smoke test: nothing uploaded" \
	-F durationSeconds=4 -F "imageUploadId=upl_00000000000000000000000000000000")
after=$(genctl credits show --account "$account" --json 2>/dev/null | jq -r ".credits // .Credits" || true)
if [ "$status" = 400 ] && [ "$(jq -r .error "$tmp/body")" = MISSING_IMAGE ] && [ "$before" = "$after" ]; then
	pass "a start naming a missing upload: 400 MISSING_IMAGE, nothing charged"
else
	fail "a start naming a missing upload: $status $(cat "$tmp/body") (balance $before, then $after)"
fi

echo "== 6. one key's throttle leaves another's alone"
other_json=$(genctl keys create --name "smoke throttle" --credits 0 --json)
other=$(jq -r .apiKey <<<"$other_json")
# A burst of 40 at once: more than the Standard plan's burst of 10.
seq 1 40 | xargs -P 40 -I{} curl -s -o /dev/null -w '%{http_code}\n' "$api/api/gen/models" -H "X-API-Key: $key" >"$tmp/burst"
throttled=$(grep -c '^429$' "$tmp/burst" || true)
status=$(call GET /api/gen/models -H "X-API-Key: $other")
if [ "$throttled" -gt 0 ] && [ "$status" = 200 ]; then
	pass "a burst got one key $throttled 429s; another key's request right after: 200"
elif [ "$throttled" = 0 ]; then
	fail "a burst of 40 requests of one key was never throttled"
else
	fail "another key's request after one key's burst: $status $(cat "$tmp/body")"
fi
genctl keys revoke "$(jq -r .keyId <<<"$other_json")" >/dev/null || true

echo "account $account: $(genctl credits show "$account" 2>/dev/null | tail -1)"

if [ -n "$fresh_region" ]; then
	cleanup_key
	logs_role=$(aws apigateway get-account --region "$region" --query cloudwatchRoleArn --output text)
	if sam delete --region "$region" --stack-name "$stack" --no-prompts; then
		pass "sam delete of the fresh region's stack (the signing user's keys removed first)"
	else
		fail "sam delete in $region"
	fi
	if aws iam get-role --role-name "${logs_role##*/}" >/dev/null 2>&1; then
		pass "the region's API Gateway CloudWatch role ${logs_role##*/} outlives the stack"
	else
		fail "the region's API Gateway CloudWatch role ${logs_role##*/} is gone: other APIs' logs stop"
	fi
fi
if [ "$failures" -gt 0 ]; then
	echo "smoke: $failures check(s) failed"
	exit 1
fi
echo "smoke: all checks passed"
