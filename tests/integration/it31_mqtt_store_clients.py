#!/usr/bin/python3
"""MQTT clients for it31_mqtt_store_test.cc (stored sessions on the store),
run with Debian's python3-paho-mqtt. Each mode prints one result line and
exits 0 when the broker behaved, 1 (with the reason) otherwise; every wait is
bounded.

  leave PORT ID VERSION EXPIRY  a new session (3.1.1: Clean Session 0; 5: Session
                                Expiry EXPIRY s) subscribes it31/ID/# at QoS 1
                                and disconnects
  resume PORT ID VERSION EXPIRY the session comes back (Session Present 1)
                                without a SUBSCRIBE, and its subscription
                                delivers a message published now
  absent PORT ID                an MQTT 5 Clean Start 0 CONNECT finds no session
                                (Session Present 0)

Messages queued for a session that is away (the test restarts the broker between runs):
  leave PORT ID VERSION EXPIRY QOS   as above, the subscription at QOS
  publish PORT ID QOS FROM TO [EXPIRY]  paho 5 publishes "FROM".."TO" to it31/ID/m at
                                QOS (each acknowledged before the next), with
                                that Message Expiry Interval if given
  collect PORT ID VERSION EXPIRY EXPECTED  the session resumes (Session Present 1)
                                and gets exactly EXPECTED ("1-20" or "a,b"), in
                                order, nothing twice (it waits a second more for
                                duplicates); a message with a Message Expiry
                                Interval has 1..59 s of it left

Publishers whose messages go to the store's queues (raw MQTT bytes, to read
the acknowledgements' reason codes):
  to-queue PORT                 QoS 1 "one" to it31/q/1 and QoS 2 "two" to
                                it31/q/2: PUBACK 0, PUBREC 0 then PUBCOMP
  full PORT                     the queue of it31/full/# holds one message: the
                                first QoS 1 PUBLISH gets PUBACK 0, the second
                                PUBACK 0x97 (MQTT 5); a 3.1.1 client's is not
                                acknowledged, its connection closed
"""
import socket
import sys
import threading

TIMEOUT_S = 5


def fail(why):
    print("FAIL " + why)
    sys.exit(1)


def connect(port, client_id, version, expiry, on_message=None):
    import paho.mqtt.client as mqtt
    from paho.mqtt.properties import Properties
    from paho.mqtt.packettypes import PacketTypes
    state = {"connack": threading.Event(), "suback": threading.Event(), "message": threading.Event()}
    if version == "5":
        client = mqtt.Client(client_id=client_id, protocol=mqtt.MQTTv5)
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = int(expiry)

        def on_connect(_c, _u, flags, _rc, _p=None):
            state["present"] = flags.get("session present")
            state["connack"].set()
        client.on_connect = on_connect
        client.connect("127.0.0.1", int(port), keepalive=10, clean_start=False, properties=props)
    else:
        client = mqtt.Client(client_id=client_id, clean_session=False, protocol=mqtt.MQTTv311)

        def on_connect(_c, _u, flags, _rc):
            state["present"] = flags.get("session present")
            state["connack"].set()
        client.on_connect = on_connect
        client.connect("127.0.0.1", int(port), keepalive=10)
    client.on_subscribe = lambda *a: state["suback"].set()

    def on_message_default(_c, _u, msg):
        state["got"] = (msg.topic, msg.payload)
        state["message"].set()
    # Before the network loop starts: a resumed session's queued messages follow the CONNACK at once.
    client.on_message = on_message or on_message_default
    client.loop_start()
    if not state["connack"].wait(TIMEOUT_S):
        fail("no CONNACK")
    return client, state


def close(client):
    client.disconnect()
    client.loop_stop()


def leave(port, client_id, version, expiry, qos="1"):
    client, state = connect(port, client_id, version, expiry)
    if state["present"]:
        fail("a new session said Session Present")
    client.subscribe("it31/%s/#" % client_id, qos=int(qos))
    if not state["suback"].wait(TIMEOUT_S):
        fail("no SUBACK")
    close(client)
    print("ok leave")


def resume(port, client_id, version, expiry):
    import paho.mqtt.client as mqtt
    client, state = connect(port, client_id, version, expiry)
    try:
        if not state["present"]:
            fail("Session Present 0: the stored session was lost")
        publisher = mqtt.Client(client_id=client_id + "-pub", protocol=mqtt.MQTTv311)
        publisher.connect("127.0.0.1", int(port))
        publisher.loop_start()
        publisher.publish("it31/%s/x" % client_id, b"after", qos=1).wait_for_publish(TIMEOUT_S)
        close(publisher)
        if not state["message"].wait(TIMEOUT_S):
            fail("the resumed subscription delivered nothing")
        if state["got"] != ("it31/%s/x" % client_id, b"after"):
            fail("wrong message %r" % (state["got"],))
    finally:
        close(client)
    print("ok resume")


def publish(port, client_id, qos, first, last, expiry=None):
    import paho.mqtt.client as mqtt
    from paho.mqtt.properties import Properties
    from paho.mqtt.packettypes import PacketTypes
    publisher = mqtt.Client(client_id=client_id + "-pub", protocol=mqtt.MQTTv5)
    publisher.connect("127.0.0.1", int(port))
    publisher.loop_start()
    props = None
    if expiry is not None:
        props = Properties(PacketTypes.PUBLISH)
        props.MessageExpiryInterval = int(expiry)
    for i in range(int(first), int(last) + 1):
        info = publisher.publish("it31/%s/m" % client_id, str(i).encode(), qos=int(qos), properties=props)
        info.wait_for_publish(TIMEOUT_S)
        if not info.is_published():
            fail("message %d not acknowledged" % i)
    close(publisher)
    print("ok publish")


def expected_list(spec):
    if "-" in spec:
        first, last = spec.split("-")
        return [str(i).encode() for i in range(int(first), int(last) + 1)]
    return [p.encode() for p in spec.split(",")]


def collect(port, client_id, version, expiry, spec):
    import time
    expected = expected_list(spec)
    got = []
    lock = threading.Lock()
    complete = threading.Event()
    problems = {}

    def on_message(_c, _u, msg):
        with lock:
            got.append(msg.payload)
            props = getattr(msg, "properties", None)
            left = getattr(props, "MessageExpiryInterval", None) if props is not None else None
            if left is not None and not 1 <= left <= 59:
                problems["bad_expiry"] = left
            if len(got) >= len(expected):
                complete.set()
    client, state = connect(port, client_id, version, expiry, on_message)
    try:
        if not state["present"]:
            fail("Session Present 0: the stored session was lost")
        complete.wait(3 * TIMEOUT_S)
        time.sleep(1)  # anything more would be a duplicate
    finally:
        close(client)
    if got != expected:
        fail("got %d messages %r, expected %r" % (len(got), got[:40], expected[:40]))
    if "bad_expiry" in problems:
        fail("a Message Expiry Interval of %r left" % problems["bad_expiry"])
    print("ok collect %d" % len(got))


def absent(port, client_id):
    client, state = connect(port, client_id, "5", 0)
    close(client)
    if state["present"]:
        fail("Session Present 1: an expired session came back")
    print("ok absent")


class Raw:
    """Bare MQTT packets over a socket (no library in the way of reason codes)."""

    def __init__(self, port, client_id, v5=True):
        self.v5 = v5
        self.sock = socket.create_connection(("127.0.0.1", int(port)), timeout=TIMEOUT_S)
        cid = client_id.encode()
        body = b"\x00\x04MQTT" + (b"\x05" if v5 else b"\x04") + b"\x02\x00\x0a"
        body += (b"\x00" if v5 else b"") + len(cid).to_bytes(2, "big") + cid
        self.send(0x10, body)
        first, _ = self.read()
        if first != 0x20:
            fail("no CONNACK")

    def send(self, first, body):
        n, length = len(body), b""
        while True:
            byte, n = n % 128, n // 128
            length += bytes([byte | (0x80 if n else 0)])
            if not n:
                break
        self.sock.sendall(bytes([first]) + length + body)

    def read(self):
        head = self.sock.recv(1)
        if not head:
            return None, b""
        length, shift = 0, 0
        while True:
            b = self.sock.recv(1)[0]
            length |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        body = b""
        while len(body) < length:
            body += self.sock.recv(length - len(body))
        return head[0], body

    def publish(self, topic, payload, qos, packet_id):
        t = topic.encode()
        body = len(t).to_bytes(2, "big") + t + packet_id.to_bytes(2, "big") + (b"\x00" if self.v5 else b"") + payload
        self.send(0x30 | (qos << 1), body)

    def answer(self, expected_type, packet_id, what):
        first, body = self.read()
        if first is None:
            return None
        if first >> 4 != expected_type or int.from_bytes(body[:2], "big") != packet_id:
            fail("%s: got packet 0x%02x %r" % (what, first or 0, body))
        return body[2] if len(body) > 2 else 0


def to_queue(port):
    c = Raw(port, "it31-to-queue")
    c.publish("it31/q/1", b"one", 1, 1)
    if c.answer(4, 1, "PUBACK") != 0:
        fail("QoS 1 not acknowledged with 0")
    c.publish("it31/q/2", b"two", 2, 2)
    if c.answer(5, 2, "PUBREC") != 0:
        fail("QoS 2 not received with 0")
    c.send(0x62, (2).to_bytes(2, "big"))
    c.answer(7, 2, "PUBCOMP")
    print("ok to-queue")


def full(port):
    c = Raw(port, "it31-full-5")
    c.publish("it31/full/a", b"first", 1, 1)
    if c.answer(4, 1, "PUBACK") != 0:
        fail("the first message was refused")
    c.publish("it31/full/a", b"second", 1, 2)
    if c.answer(4, 2, "PUBACK") != 0x97:
        fail("the second message was not refused with 0x97 Quota exceeded")
    old = Raw(port, "it31-full-311", v5=False)
    old.publish("it31/full/a", b"third", 1, 3)
    try:
        first, body = old.read()
    except (ConnectionResetError, socket.timeout) as e:
        first, body = None, repr(e)
    if first is not None:
        fail("3.1.1: got packet 0x%02x instead of a closed connection" % first)
    print("ok full")


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "leave":
        leave(*sys.argv[2:7])
    elif mode == "publish":
        publish(*sys.argv[2:8])
    elif mode == "collect":
        collect(*sys.argv[2:7])
    elif mode == "resume":
        resume(*sys.argv[2:6])
    elif mode == "absent":
        absent(*sys.argv[2:4])
    elif mode == "to-queue":
        to_queue(sys.argv[2])
    elif mode == "full":
        full(sys.argv[2])
    else:
        fail("unknown mode " + mode)
