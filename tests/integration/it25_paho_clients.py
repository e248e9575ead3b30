#!/usr/bin/python3
"""python3-paho-mqtt (Debian) clients for it25_mqttjs_test.cc: what it21 does
not cover with paho. Each mode prints "ok MODE VERSION" and exits 0 when the
broker behaved, "FAIL why" and exits 1 otherwise; every wait is bounded.

  shared VERSION PORT    $share/g/it25/p/#: 20 channels over two members, each to exactly one
  refused VERSION PORT   a filter the broker cannot express: SUBACK 0x8F (5) / 0x80 (3.1.1)
"""
import sys
import threading

import paho.mqtt.client as mqtt

TIMEOUT_S = 5


def fail(why):
    print("FAIL " + why)
    sys.exit(1)


def client(version, port, on_message=None):
    proto = mqtt.MQTTv5 if version == "5" else mqtt.MQTTv311
    c = mqtt.Client(protocol=proto)
    subacks = []
    subscribed = threading.Event()

    def on_subscribe(_c, _u, _mid, granted, *rest):
        subacks.append([g.value if hasattr(g, "value") else g for g in granted])
        subscribed.set()

    c.on_subscribe = on_subscribe
    if on_message:
        c.on_message = on_message
    c.connect("127.0.0.1", int(port), keepalive=10)
    c.loop_start()
    return c, subacks, subscribed


def shared(version, port):
    seen = [{}, {}]
    lock = threading.Lock()
    done = threading.Event()

    def counter(i):
        def on_message(_c, _u, msg):
            with lock:
                seen[i][msg.topic] = seen[i].get(msg.topic, 0) + 1
                if sum(len(s) for s in seen) == 20 and msg.payload == b"x":
                    done.set()
                if msg.payload == b"fence":
                    fenced.set()
        return on_message

    fenced = threading.Event()
    members = []
    for i in range(2):
        c, _, subscribed = client(version, port, counter(i))
        c.subscribe("$share/g/it25/p%s/#" % version, qos=1)
        if not subscribed.wait(TIMEOUT_S):
            fail("no SUBACK")
        members.append(c)
    pub, _, _ = client(version, port)
    for i in range(20):
        pub.publish("it25/p%s/%d" % (version, i), b"x", qos=1).wait_for_publish(TIMEOUT_S)
    if not done.wait(TIMEOUT_S):
        fail("not every channel arrived: %r" % seen)
    pub.publish("it25/p%s/0" % version, b"fence", qos=1).wait_for_publish(TIMEOUT_S)
    if not fenced.wait(TIMEOUT_S):
        fail("no fence")
    for i in range(20):
        topic = "it25/p%s/%d" % (version, i)
        count = seen[0].get(topic, 0) + seen[1].get(topic, 0)
        if count != 2 if i == 0 else count != 1:  # channel 0 also carried the fence
            fail("%s reached the group %d times" % (topic, count))
    if not seen[0] or not seen[1]:
        fail("unbalanced: %d and %d" % (len(seen[0]), len(seen[1])))
    for c in members + [pub]:
        c.disconnect()
        c.loop_stop()


def refused(version, port):
    c, subacks, subscribed = client(version, port)
    c.subscribe([("it25/a*b", 0), ("it25/ok", 1)])
    if not subscribed.wait(TIMEOUT_S):
        fail("no SUBACK")
    expected = [0x8F, 1] if version == "5" else [0x80, 1]
    if subacks[0] != expected:
        fail("SUBACK %r, expected %r" % (subacks[0], expected))
    c.disconnect()
    c.loop_stop()


if __name__ == "__main__":
    mode, version, port = sys.argv[1:4]
    {"shared": shared, "refused": refused}[mode](version, port)
    print("ok %s %s" % (mode, version))
