#!/usr/bin/python3
"""HTTP and MQTT-over-WebSocket clients for it23_http_test.cc, run with
Debian's python3 (http.client from its standard library) and
python3-paho-mqtt (transport="websockets"). Each mode prints one result line
and exits 0 when the broker behaved, 1 (with the reason) otherwise; every
wait is bounded.

  http PORT                 GET /healthz twice on one keep-alive connection, a 404 and a 405
  relay PORT [CA]           over ws:// (wss:// with CA): subscribe to it23/in, print "ready",
                            answer each message with its reverse on it23/out, exit after one
"""
import http.client
import ssl
import sys
import threading

WAIT_S = 5


def fail(why):
    print("fail " + why, flush=True)
    sys.exit(1)


def http_mode(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    for _ in range(2):
        conn.request("GET", "/healthz")
        r = conn.getresponse()
        body = r.read()
        if r.status != 200 or body != b"ok\n" or r.getheader("Connection") != "keep-alive":
            fail("healthz %d %r %s" % (r.status, body, r.getheader("Connection")))
    sock = conn.sock
    conn.request("GET", "/no/such/path")
    r = conn.getresponse()
    r.read()
    if r.status != 404:
        fail("expected 404, got %d" % r.status)
    conn.request("POST", "/healthz", body=b"x")
    r = conn.getresponse()
    r.read()
    if r.status != 405:
        fail("expected 405, got %d" % r.status)
    if conn.sock is not sock:
        fail("the connection was not kept alive")
    conn.close()
    print("ok http", flush=True)


def relay_mode(port, ca):
    import paho.mqtt.client as mqtt

    subscribed = threading.Event()
    answered = threading.Event()
    client = mqtt.Client(client_id="it23-relay", transport="websockets")
    client.ws_set_options(path="/mqtt")
    if ca:
        client.tls_set(ca_certs=ca, cert_reqs=ssl.CERT_REQUIRED)

    def on_connect(c, userdata, flags, rc):
        if rc != 0:
            fail("CONNACK %d" % rc)
        c.subscribe("it23/in", qos=1)

    def on_subscribe(c, userdata, mid, granted):
        subscribed.set()

    sent = []

    def on_message(c, userdata, message):
        # Never wait inside a callback: the network loop that runs it brings the PUBACK.
        sent.append(c.publish("it23/out", message.payload[::-1], qos=1))
        answered.set()

    client.on_connect = on_connect
    client.on_subscribe = on_subscribe
    client.on_message = on_message
    client.connect("127.0.0.1", port, keepalive=30)
    client.loop_start()
    if not subscribed.wait(WAIT_S):
        fail("no SUBACK over websocket")
    print("ready", flush=True)
    if not answered.wait(2 * WAIT_S):
        fail("no message over websocket")
    sent[0].wait_for_publish()
    client.disconnect()
    client.loop_stop()
    print("ok relay", flush=True)


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "http":
        http_mode(port)
    elif mode == "relay":
        relay_mode(port, sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        fail("unknown mode " + mode)


if __name__ == "__main__":
    main()
