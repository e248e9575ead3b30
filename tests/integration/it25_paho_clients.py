#!/usr/bin/python3
"""python3-paho-mqtt (Debian) clients for it25_mqttjs_test.cc: what it21 does
not cover with paho. Each mode prints "ok MODE VERSION" and exits 0 when the
broker behaved, "FAIL why" and exits 1 otherwise; every wait is bounded.

  shared VERSION PORT    $share/g/it25/p/#: 20 channels over two members, each to exactly one
  refused VERSION PORT   a filter the broker cannot express: SUBACK 0x8F (5) / 0x80 (3.1.1)
  redeliver VERSION PORT a QoS 1 message left unacknowledged (on_message raises, so paho
                         sends no PUBACK) comes again with DUP after an abrupt close and a
                         reconnect of the persistent session (Clean Session 0 / expiry 60 s)
  takeover VERSION PORT  the same, but the second connection takes the client id over while the
                         first is still connected: the first is closed (MQTT 5: DISCONNECT 0x8E),
                         the second gets Session Present 1, the unacknowledged message again with
                         DUP, and the subscription goes on delivering
  qos VERSION PORT       a QoS 2 subscription gets each message at the QoS it was published
                         with, when lower [MQTT-3.8.4-8]: the retained message published at
                         QoS 1 (a RETAIN 0 QoS 0 message after it changes nothing), then live
                         messages at QoS 0, 1 and 2
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


def persistent(version, port, on_message, will=False, name="it25-paho-"):
    """A client of the persistent session NAME+VERSION; returns it and its CONNACK flags."""
    from paho.mqtt.properties import Properties
    from paho.mqtt.packettypes import PacketTypes
    cid = name + version
    if version == "5":
        c = mqtt.Client(client_id=cid, protocol=mqtt.MQTTv5)
    else:
        c = mqtt.Client(client_id=cid, protocol=mqtt.MQTTv311, clean_session=False)
    c.on_message = on_message
    if will:
        c.will_set("it25/pwill/" + version, b"gone")
    connacked = threading.Event()
    flags_seen = {}

    def on_connect(_c, _u, flags, *rest):
        flags_seen.update(flags)
        connacked.set()

    c.on_connect = on_connect
    if version == "5":
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = 60
        c.connect("127.0.0.1", int(port), keepalive=10, clean_start=False, properties=props)
    else:
        c.connect("127.0.0.1", int(port), keepalive=10)
    c.loop_start()
    if not connacked.wait(TIMEOUT_S):
        fail("no CONNACK")
    return c, flags_seen


def unacknowledged(version, port, topic, **persistent_args):
    """A persistent-session client subscribed to TOPIC at QoS 1 that receives one message, m1,
    and never acknowledges it (paho's loop stops in on_message, before its PUBACK; the
    socket stays open). Returns the client, m1's (mid, dup) and the publisher."""
    first_got = threading.Event()
    first_mid = []

    def refuse_to_ack(_c, _u, msg):
        first_mid.append((msg.mid, msg.dup))
        first_got.set()
        raise RuntimeError("no PUBACK for this one")

    default_hook = threading.excepthook
    threading.excepthook = lambda a: None if str(a.exc_value) == "no PUBACK for this one" else default_hook(a)
    first, _ = persistent(version, port, refuse_to_ack, **persistent_args)
    subscribed = threading.Event()
    first.on_subscribe = lambda *a: subscribed.set()
    first.subscribe(topic, qos=1)
    if not subscribed.wait(TIMEOUT_S):
        fail("no SUBACK")
    pub, _, _ = client(version, port)
    pub.publish(topic, b"m1", qos=1).wait_for_publish(TIMEOUT_S)
    if not first_got.wait(TIMEOUT_S) or first_mid[0][1]:
        fail("first delivery missing or with DUP: %r" % first_mid)
    return first, first_mid[0], pub


def redeliver(version, port):
    topic = "it25/pq%s/x" % version
    will = threading.Event()
    watcher, _, watching = client(version, port, lambda _c, _u, m: will.set())
    watcher.subscribe("it25/pwill/" + version)
    if not watching.wait(TIMEOUT_S):
        fail("no SUBACK")
    first, first_mid, pub = unacknowledged(version, port, topic, will=True)
    first._sock.close()  # abrupt: no DISCONNECT
    if not will.wait(TIMEOUT_S):
        fail("the broker did not see the close (no Will)")
    again_got = threading.Event()
    again_msg = []

    def on_again(_c, _u, msg):
        again_msg.append((msg.topic, msg.payload, msg.mid, msg.dup))
        again_got.set()

    again, flags = persistent(version, port, on_again)
    if not flags.get("session present"):
        fail("session not present: %r" % flags)
    if not again_got.wait(TIMEOUT_S):
        fail("not redelivered")
    if again_msg[0] != (topic, b"m1", first_mid[0], 1):
        fail("redelivery %r, first mid %r" % (again_msg[0], first_mid))
    for c in (again, pub, watcher):
        c.disconnect()
        c.loop_stop()


def takeover(version, port):
    topic = "it25/pt%s/x" % version
    first, first_mid, pub = unacknowledged(version, port, topic, name="it25-paho-takeover-")
    got = []
    got_m2 = threading.Event()

    def on_again(_c, _u, msg):
        got.append((msg.topic, msg.payload, msg.mid, msg.dup))
        if msg.payload == b"m2":
            got_m2.set()

    # The first connection is still open (its loop stopped in on_message, its socket is live).
    again, flags = persistent(version, port, on_again, name="it25-paho-takeover-")
    if not flags.get("session present"):
        fail("session not present after the takeover: %r" % flags)
    try:
        first._sock.settimeout(TIMEOUT_S)
        sock_alive = first._sock.recv(1 << 16)  # the broker's goodbye, then the close
    except OSError:
        sock_alive = b""
    if version == "5" and sock_alive[:1] != b"\xe0":
        fail("the first connection did not get DISCONNECT: %r" % sock_alive[:8])
    if version == "5" and b"\x8e" not in sock_alive[:4]:
        fail("DISCONNECT without reason 0x8E (session taken over): %r" % sock_alive[:8])
    pub.publish(topic, b"m2", qos=1).wait_for_publish(TIMEOUT_S)
    # The resend first [MQTT-4.4.0-1]; the resumed subscription's retained image may come before m2.
    if not got_m2.wait(TIMEOUT_S):
        fail("the subscription did not go on after the takeover: got %r" % (got,))
    if got[0] != (topic, b"m1", first_mid[0], 1):
        fail("redelivery %r, first mid %r" % (got[0], first_mid))
    if got[-1][3]:
        fail("m2 came with DUP: %r" % (got,))
    for c in (again, pub):
        c.disconnect()
        c.loop_stop()


def qos(version, port):
    topic = "it25/q%s/" % version
    got = []
    lock = threading.Lock()
    done = threading.Event()

    def on_message(_c, _u, msg):
        with lock:
            got.append((msg.topic, msg.payload, msg.qos, bool(msg.retain)))
            if msg.payload == b"2":
                done.set()

    pub, _, _ = client(version, port)
    pub.publish(topic + "r", b"kept", qos=1, retain=True).wait_for_publish(TIMEOUT_S)
    pub.publish(topic + "r", b"transient", qos=0).wait_for_publish(TIMEOUT_S)
    sub, _, subscribed = client(version, port, on_message)
    sub.subscribe(topic + "#", qos=2)
    if not subscribed.wait(TIMEOUT_S):
        fail("no SUBACK")
    for q in (0, 1, 2):
        pub.publish(topic + "a", str(q).encode(), qos=q).wait_for_publish(TIMEOUT_S)
    if not done.wait(TIMEOUT_S):
        fail("not every message arrived: %r" % (got,))
    expected = [(topic + "r", b"kept", 1, True)] + [(topic + "a", str(q).encode(), q, False) for q in (0, 1, 2)]
    if got != expected:
        fail("got %r, expected %r" % (got, expected))
    pub.publish(topic + "r", b"", qos=1, retain=True).wait_for_publish(TIMEOUT_S)  # clears it
    for c in (sub, pub):
        c.disconnect()
        c.loop_stop()


if __name__ == "__main__":
    mode, version, port = sys.argv[1:4]
    modes = {"shared": shared, "refused": refused, "redeliver": redeliver, "takeover": takeover, "qos": qos}
    modes[mode](version, port)
    print("ok %s %s" % (mode, version))
