#!/usr/bin/env bash
# Writes the seed corpora under fuzz/corpus/. The seeds are committed; rerun
# this only to change them. Frames are the byte-exact examples pinned by
# tests/wire/golden_frames_test.cc.
set -euo pipefail
cd "$(dirname "$0")/corpus"

# put FILE "hex bytes ..." : writes the bytes to FILE.
put() {
  local file=$1 hex=${2// /} escaped=""
  for ((i = 0; i < ${#hex}; i += 2)); do escaped+="\\x${hex:i:2}"; done
  printf '%b' "$escaped" >"$file"
}

payload="01 00 16 00 02 39 30 00 00 00 00 00 00 fe"  # {BID(22) = 123.45}
hello="15 00 00 00 01 00 00 00 01 00 01 00 88 13 00 00 03 00 63 6c 69"
subscribe="14 00 00 00 02 00 00 00 01 00 00 00 06 00 44 45 4d 4f 2f 3e"
register="17 00 00 00 05 00 00 00 07 00 00 00 00 08 00 44 45 4d 4f 2f 49 42 4d"
publish="1a 00 00 00 06 00 00 00 07 00 00 00 $payload"
heartbeat="08 00 00 00 07 00 00 00"

mkdir -p frame_decoder field_list
cd frame_decoder
put hello "$hello"
put welcome "21 00 00 00 81 00 00 00 01 00 88 13 00 00 00 00 10 00 e8 03 00 00 09 00 74 69 63 6b 77 69 72 65 64"
put subscribe "$subscribe"
put unsubscribe "14 00 00 00 03 00 00 00 01 00 00 00 06 00 44 45 4d 4f 2f 3e"
put snapshot "16 00 00 00 04 00 00 00 02 00 00 00 08 00 44 45 4d 4f 2f 49 42 4d"
put register "$register"
put publish "$publish"
put publish_image "1a 00 00 00 06 01 00 00 07 00 00 00 $payload"
put heartbeat "$heartbeat"
put ack "10 00 00 00 82 00 00 00 01 00 00 00 00 00 00 00"
put channel "17 00 00 00 83 00 00 00 03 00 00 00 00 08 00 44 45 4d 4f 2f 49 42 4d"
put image "26 00 00 00 84 00 00 00 03 00 00 00 29 00 00 00 00 00 00 00 01 00 00 00 $payload"
put update "22 00 00 00 85 00 00 00 03 00 00 00 2a 00 00 00 00 00 00 00 $payload"
put status "11 00 00 00 86 00 00 00 03 00 00 00 01 00 00 00 00"
put error "17 00 00 00 87 00 00 00 05 00 0b 00 68 65 6c 6c 6f 20 66 69 72 73 74"
put session "$hello $subscribe $register $publish $heartbeat"
put truncated_publish "1a 00 00 00 06 00 00 00 07 00 00"
put too_large "00 00 00 01 06 00 00 00"
cd ../field_list
put bid "$payload"
put empty "00 00"
put every_type "05 00 01 00 01 07 00 00 00 00 00 00 00 16 00 02 39 30 00 00 00 00 00 00 fe 03 00 03 03 00 49 42 4d 04 00 04 02 00 de ad 05 00 05 00 a0 3b 7e 5d 3c 8c 17"
put duplicate_id "02 00 01 00 01 07 00 00 00 00 00 00 00 01 00 01 08 00 00 00 00 00 00 00"

# MQTT packets (mqtt-v5.0-os and mqtt-v3.1.1-os), as tests/mqtt builds them.
mkdir -p ../mqtt_decoder
cd ../mqtt_decoder
connect311="10 17 00 04 4d 51 54 54 04 c2 00 0a 00 03 63 69 64 00 04 75 73 65 72 00 02 70 77"
connect5="10 18 00 04 4d 51 54 54 05 06 00 1e 05 21 00 0a 26 00 00 00 03 63 69 64 00 01 74 00 00"
put connect311 "$connect311"
put connect5_will "$connect5"
put publish_qos1 "32 0a 00 03 61 2f 62 00 07 68 69 00"
put publish5_alias "33 0d 00 03 61 2f 62 00 07 03 23 00 03 68 69"
put pubrel "62 02 00 07"
put puback5_reason "40 04 00 07 10 00"
put subscribe5 "82 0c 00 01 00 00 03 61 2f 23 2d 00 01 62 00"
put unsubscribe "a2 07 00 01 00 03 61 2f 23"
put pingreq "c0 00"
put disconnect5_will "e0 01 04"
put session311 "$connect311 82 08 00 01 00 03 61 2f 23 00 30 05 00 01 61 68 69 c0 00 e0 00"
put qos3 "36 06 00 01 61 00 01 78"

# hello: the HELLO flags byte, then its body (version 1; version 2 with user "alice", password "EQ/IBM")
cd ../
mkdir -p hello
cd hello
put v1 "00 01 00 01 00 88 13 00 00 03 00 63 6c 69"
put v2 "01 01 00 02 00 88 13 00 00 03 00 63 6c 69 05 00 61 6c 69 63 65 06 00 45 51 2f 49 42 4d"

# WebSocket frames as a client sends them (RFC 6455 5.7's masked "Hello",
# fragments, a ping, a close); the first byte chooses the chunk size and role.
mkdir -p ../websocket_frame
cd ../websocket_frame
put masked_hello "05 81 85 37 fa 21 3d 7f 9f 4d 51 58"
put fragments "03 02 83 37 fa 21 3d 7f 9f 4d 80 82 37 fa 21 3d 5b 95"
put ping_close "40 89 81 37 fa 21 3d 47 88 82 37 fa 21 3d 34 12"
put unmasked_server_text "90 81 05 48 65 6c 6c 6f"
put length16 "07 82 fe 00 7e 37 fa 21 3d"

# HTTP requests; the first byte chooses the chunk size.
mkdir -p ../http_request
cd ../http_request
printf '\x10GET /healthz HTTP/1.1\r\nHost: h\r\n\r\nGET /a?b=c HTTP/1.1\r\n\r\n' >keepalive
printf '\x07POST /api HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloPOST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n' >bodies
printf '\x20GET /mqtt HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mqtt\r\n\r\n\x82\x80' >upgrade

# stream_request: browser requests on /stream (docs/stream.md), as text
cd ../
mkdir -p stream_request
cd stream_request
printf '%s' '{"op":"subscribe","id":1,"topic":"DEMO/EQ/>","conflate_ms":250,"policy":"drop"}' >subscribe
printf '%s' '{"op":"unsubscribe","id":2,"topic":"DEMO/EQ/>"}' >unsubscribe
printf '%s' '{"op":"login","id":3,"user":"alice","password":"pw"}' >login
printf '%s' '{"op":"subscribe","topic":5}' >bad_topic

cd ..
mkdir -p text
cd text
printf 'NYSE/EQ/IBM' >plain
printf 'NYSE/*/IBM/>' >pattern
printf 'NYSE/EQ/I\xe2\x80\x8bBM' >zero_width   # U+200B
printf 'A/\xe2\x80\xaeMBI' >rlo                # U+202E
printf 'A/\xc2\x85' >nel                       # U+0085
printf 'feed\n2026 ERROR x\x1b[2J' >log_line
printf 'A/\xed\xa0\x80' >surrogate
printf 'caf\xc3\xa9/\xf0\x9f\x98\x80' >emoji
