#!/usr/bin/python3
"""MQTT clients for it21_mqtt_test.cc, run with Debian's python3 and its
python3-paho-mqtt. Each mode prints one result line and exits 0 when the
broker behaved, 1 (with the reason) otherwise; every wait is bounded.

  paho VERSION PORT   paho (311 or 5) publishes QoS 1 and QoS 2 and gets
                      both back through its own subscription
  qos2 PORT           raw MQTT 5 bytes: the QoS 2 handshake, a resent
                      PUBLISH not published twice, PUBREL, PINGREQ
  malformed PORT      raw MQTT 5 bytes: a QoS 3 PUBLISH gets DISCONNECT 0x81
  resume PORT         paho 3.1.1 with Clean Session 0: the session and its
                      subscription come back on reconnect (Session Present)
  props PORT          paho 5 publishes with user properties, content type,
                      response topic, correlation data, payload format and
                      expiry: a paho 5 subscriber gets them all, a 3.1.1 one
                      the message alone; a retained value with properties
                      reaches a later subscriber with them, its expiry less
                      the seconds it waited
  request PORT        paho 5 request/response: the responder answers on the
                      request's Response Topic with its Correlation Data
  expired PORT        a retained value with a 1 s expiry, 2 s later: a new
                      subscriber (5 and 3.1.1) is not sent it
  retain PORT         [MQTT-3.3.1-12]: a RETAIN 0 message (with other
                      properties) replaces neither the retained message nor
                      its properties; a zero-byte retained one clears it (5
                      and 3.1.1 subscribers)

Sessions and users (MqttInteropUsers: the users file of it21_mqtt_test.cc),
raw MQTT 5 bytes:
  hijack PORT         alice holds an unacknowledged QoS 1 message of it21/sec/x;
                      bob, then anonymous, connect with her client id and Clean
                      Start 0: Session Present 0 and nothing of hers; alice is
                      not kicked; she resumes her own session (the message, DUP)
  revoked-store PORT  alice leaves unacknowledged QoS 1 messages of it21/sec/x,
                      y and z in her persistent session and drops the connection
  revoked-resume PORT after a reload that revoked x and left y delayed-only,
                      alice resumes: only z is resent
  will MODE PORT      doomed connects with a Will on it21/will/doomed and prints
                      "ready"; MODE removed: the broker closes it (the test
                      removes the user), and a watcher sees no Will before two
                      fences; MODE dropped: it drops the connection, the watcher
                      gets the Will
  will-delay PORT     MQTT 5 Will Delay Interval: a Will with a 1 s delay
                      comes no earlier, with its User Property; one whose
                      session resumes within its delay never comes; one whose
                      session a Clean Start 1 connection ends comes at once
  catch-up PORT       a resumed MQTT 5 session gets the last value of what was
                      published while it was away, and nothing it had had
  server-keepalive PORT  (mqtt_max_keepalive_s = 60) CONNACK's Server Keep
                      Alive for keep-alives 120 and 0, none for 30
  shared-users PORT   feed (it21/>) and bob (it21/sh/0 only) both join
                      $share/g/it21/sh/#: feed gets all 20 channels, bob his one
"""
import queue
import socket
import sys
import threading
import time

TIMEOUT_S = 5


def fail(why):
    print("FAIL " + why)
    sys.exit(1)


def paho(version, port):
    import paho.mqtt.client as mqtt
    proto = mqtt.MQTTv5 if version == "5" else mqtt.MQTTv311
    client = mqtt.Client(client_id="it21-paho-" + version, protocol=proto)
    subscribed = threading.Event()
    got = {}
    done = threading.Event()

    def on_subscribe(*args):
        subscribed.set()

    def on_message(_c, _u, msg):
        got[msg.topic] = msg.payload
        if len(got) == 2:
            done.set()

    client.on_subscribe = on_subscribe
    client.on_message = on_message
    client.connect("127.0.0.1", int(port), keepalive=10)
    client.loop_start()
    try:
        topic = "it21/paho" + version
        client.subscribe(topic + "/#", qos=1)
        if not subscribed.wait(TIMEOUT_S):
            fail("no SUBACK")
        q1 = client.publish(topic + "/q1", b"one", qos=1)
        q2 = client.publish(topic + "/q2", b"two", qos=2)
        q1.wait_for_publish(TIMEOUT_S)
        q2.wait_for_publish(TIMEOUT_S)
        if not (q1.is_published() and q2.is_published()):
            fail("PUBACK or PUBCOMP missing")
        if not done.wait(TIMEOUT_S):
            fail("messages not delivered back: %r" % got)
        if got != {topic + "/q1": b"one", topic + "/q2": b"two"}:
            fail("wrong messages: %r" % got)
        print("ok paho " + version)
    finally:
        client.disconnect()
        client.loop_stop()


def resume(port):
    import paho.mqtt.client as mqtt
    events = {"connack": threading.Event(), "suback": threading.Event(), "message": threading.Event()}
    state = {}

    def on_connect(_c, _u, flags, _rc):
        state["present"] = flags.get("session present")
        events["connack"].set()

    def on_message(_c, _u, msg):
        state["message"] = (msg.topic, msg.payload)
        events["message"].set()

    def session():
        client = mqtt.Client(client_id="it21-resume", clean_session=False, protocol=mqtt.MQTTv311)
        client.on_connect = on_connect
        client.on_subscribe = lambda *a: events["suback"].set()
        client.on_message = on_message
        for e in events.values():
            e.clear()
        client.connect("127.0.0.1", int(port), keepalive=10)
        client.loop_start()
        if not events["connack"].wait(TIMEOUT_S):
            fail("no CONNACK")
        return client

    first = session()
    if state["present"] != 0:
        fail("a new session said Session Present")
    first.subscribe("it21/resume/#", qos=1)
    if not events["suback"].wait(TIMEOUT_S):
        fail("no SUBACK")
    first.disconnect()
    first.loop_stop()
    publisher = mqtt.Client(client_id="it21-resume-pub", protocol=mqtt.MQTTv311)
    publisher.connect("127.0.0.1", int(port))
    publisher.loop_start()
    publisher.publish("it21/resume/x", b"meanwhile", qos=1).wait_for_publish(TIMEOUT_S)
    publisher.disconnect()
    publisher.loop_stop()
    again = session()  # no SUBSCRIBE this time
    try:
        if state["present"] != 1:
            fail("Session Present expected on resume")
        if not events["message"].wait(TIMEOUT_S):
            fail("the resumed subscription delivered nothing")
        if state["message"] != ("it21/resume/x", b"meanwhile"):
            fail("wrong message %r" % (state["message"],))
        print("ok resume")
    finally:
        again.disconnect()
        again.loop_stop()


class Paho:
    """A connected paho client whose messages queue up; every wait bounded."""

    def __init__(self, port, client_id, version="5"):
        import paho.mqtt.client as mqtt
        self.client = mqtt.Client(client_id=client_id,
                                  protocol=mqtt.MQTTv5 if version == "5" else mqtt.MQTTv311)
        self.messages = queue.Queue()
        self.connected, self.subscribed = threading.Event(), threading.Event()
        self.client.on_connect = lambda *a: self.connected.set()
        self.client.on_subscribe = lambda *a: self.subscribed.set()
        self.client.on_message = lambda _c, _u, msg: self.messages.put(msg)
        self.client.connect("127.0.0.1", int(port), keepalive=10)
        self.client.loop_start()
        if not self.connected.wait(TIMEOUT_S):
            fail(client_id + ": no CONNACK")

    def subscribe(self, topic, qos=1, retain_handling=None):
        self.subscribed.clear()
        if retain_handling is None:
            self.client.subscribe(topic, qos=qos)
        else:
            from paho.mqtt.subscribeoptions import SubscribeOptions
            self.client.subscribe(topic, options=SubscribeOptions(qos=qos, retainHandling=retain_handling))
        if not self.subscribed.wait(TIMEOUT_S):
            fail("no SUBACK for " + topic)

    def publish(self, topic, payload, props=None, retain=False):
        info = self.client.publish(topic, payload, qos=1, retain=retain, properties=props)
        info.wait_for_publish(TIMEOUT_S)
        if not info.is_published():
            fail("no PUBACK for " + topic)

    def next(self, what):
        try:
            return self.messages.get(timeout=TIMEOUT_S)
        except queue.Empty:
            fail("no message: " + what)

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()


def publish_properties(**values):
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties
    props = Properties(PacketTypes.PUBLISH)
    for name, value in values.items():
        setattr(props, name, value)
    return props


USER = [("a", "1"), ("b", "2"), ("a", "3")]  # order and repeats kept [MQTT-3.3.2-18]


def check_properties(msg, expiry_range, what):
    p = msg.properties
    got = {name: getattr(p, name, None) for name in
           ("UserProperty", "ContentType", "ResponseTopic", "CorrelationData", "PayloadFormatIndicator")}
    want = {"UserProperty": USER, "ContentType": "text/plain", "ResponseTopic": "it21/props/reply",
            "CorrelationData": b"\x00\x01corr", "PayloadFormatIndicator": 1}
    if got != want:
        fail("%s: properties %r, expected %r" % (what, got, want))
    expiry = getattr(p, "MessageExpiryInterval", None)
    if expiry is None or not expiry_range[0] <= expiry <= expiry_range[1]:
        fail("%s: Message Expiry Interval %r, expected %r" % (what, expiry, expiry_range))


def props(port):
    sub5, sub311 = Paho(port, "it21-props-5"), Paho(port, "it21-props-311", "311")
    sub5.subscribe("it21/props/live")
    sub311.subscribe("it21/props/live")
    pub = Paho(port, "it21-props-pub")
    fields = dict(UserProperty=USER, ContentType="text/plain", ResponseTopic="it21/props/reply",
                  CorrelationData=b"\x00\x01corr", PayloadFormatIndicator=1)
    pub.publish("it21/props/live", b"hello", publish_properties(MessageExpiryInterval=60, **fields))
    live = sub5.next("live, 5")
    if live.payload != b"hello" or live.retain:
        fail("live message %r retain %r" % (live.payload, live.retain))
    check_properties(live, (59, 60), "live")
    old = sub311.next("live, 3.1.1")
    if old.payload != b"hello" or getattr(old, "properties", None) is not None:
        fail("3.1.1 message %r with %r" % (old.payload, getattr(old, "properties", None)))
    # The retained message: the last value, kept with its properties; its
    # expiry counts the whole seconds it waited in the broker.
    pub.publish("it21/props/kept", b"kept", publish_properties(MessageExpiryInterval=10, **fields), retain=True)
    time.sleep(2.2)
    late = Paho(port, "it21-props-late")
    late.subscribe("it21/props/kept")
    kept = late.next("retained")
    if kept.payload != b"kept" or not kept.retain:
        fail("retained message %r retain %r" % (kept.payload, kept.retain))
    check_properties(kept, (7, 8), "retained")
    for c in (sub5, sub311, pub, late):
        c.close()
    print("ok props")


def request(port):
    responder = Paho(port, "it21-rr-responder")

    def answer(_c, _u, msg):
        p = msg.properties
        reply = publish_properties(CorrelationData=getattr(p, "CorrelationData", b""))
        responder.client.publish(getattr(p, "ResponseTopic", "it21/rr/lost"), b"answer to " + msg.payload,
                                 qos=1, properties=reply)

    responder.client.on_message = answer
    responder.subscribe("it21/rr/request")
    requester = Paho(port, "it21-rr-requester")
    requester.subscribe("it21/rr/reply/requester")
    requester.publish("it21/rr/request", b"q1",
                      publish_properties(ResponseTopic="it21/rr/reply/requester", CorrelationData=b"id-42"))
    reply = requester.next("response")
    got = (reply.topic, reply.payload, getattr(reply.properties, "CorrelationData", None))
    if got != ("it21/rr/reply/requester", b"answer to q1", b"id-42"):
        fail("response %r" % (got,))
    responder.close()
    requester.close()
    print("ok request")


def expired(port):
    pub = Paho(port, "it21-exp-pub")
    pub.publish("it21/exp/v", b"stale", publish_properties(MessageExpiryInterval=1), retain=True)
    time.sleep(2)
    subs = [Paho(port, "it21-exp-5"), Paho(port, "it21-exp-311", "311")]
    for sub in subs:
        sub.subscribe("it21/exp/#")
    # An expired retained value would come before the fence.
    fence_then_close(pub, subs, "it21/exp/fence")
    print("ok expired")


def retain(port):
    watcher, pub = Paho(port, "it21-rt-watcher"), Paho(port, "it21-rt-pub")
    watcher.subscribe("it21/rt/a")

    def published(payload, retain, props=None):
        # The watcher's copy: the broker applied it before the next subscriber asks.
        pub.publish("it21/rt/a", payload, props, retain=retain)
        got = watcher.next("the message just published")
        if got.payload != payload:
            fail("watcher got %r, expected %r" % (got.payload, payload))

    published(b"kept", True, publish_properties(UserProperty=USER))
    published(b"live", False, publish_properties(UserProperty=[("live", "1")]))
    for version in ("5", "311"):
        sub = Paho(port, "it21-rt-" + version, version)
        sub.subscribe("it21/rt/#")
        got = sub.next("the retained message")
        if (got.payload, got.retain) != (b"kept", 1):
            fail("%s: retained %r retain %d" % (version, got.payload, got.retain))
        user = getattr(got.properties, "UserProperty", None) if version == "5" else USER
        if user != USER:
            fail("%s: retained message's properties %r" % (version, user))
        fence_then_close(pub, [sub], "it21/rt/fence-" + version, close_pub=False)
    published(b"", True)
    for version in ("5", "311"):
        sub = Paho(port, "it21-rt-cleared-" + version, version)
        sub.subscribe("it21/rt/a")
        sub.subscribe("it21/rt/fence")
        fence_then_close(pub, [sub], "it21/rt/fence", close_pub=False)  # a retained message would come first
    watcher.close()
    pub.close()
    print("ok retain")


def fence_then_close(pub, subs, fence, close_pub=True):
    """What each subscriber gets next is `fence`, published now; then all close."""
    pub.publish(fence, b"fence")
    for sub in subs:
        got = sub.next("the fence")
        if got.topic != fence:
            fail("got %s %r before the fence" % (got.topic, got.payload))
        sub.close()
    if close_pub:
        pub.close()


def resubscribe(port):
    """[MQTT-3.8.4-3]: the same filter again resends the retained messages
    (Retain Handling 0, and always in 3.1.1), not with Retain Handling 1."""
    pub = Paho(port, "it21-rs-pub")
    pub.publish("it21/rs/a", b"v1", retain=True)
    subs = [Paho(port, "it21-rs-5"), Paho(port, "it21-rs-311", "311")]
    for sub in subs:
        for round in ("first", "again"):
            sub.subscribe("it21/rs/#")
            got = sub.next("the retained message, " + round)
            if (got.topic, got.payload, got.retain) != ("it21/rs/a", b"v1", 1):
                fail("%s: got %s %r retain %d" % (round, got.topic, got.payload, got.retain))
    subs[0].subscribe("it21/rs/#", retain_handling=1)
    fence_then_close(pub, subs, "it21/rs/fence")  # a retained message resent would come before it
    print("ok resubscribe")


def mqtt_str(s):
    b = s.encode()
    return bytes([len(b) >> 8, len(b) & 0xFF]) + b


def packet(first, body):
    n, length = len(body), b""
    while True:
        byte, n = n & 0x7F, n >> 7
        length += bytes([byte | (0x80 if n else 0)])
        if not n:
            return bytes([first]) + length + body


class Raw:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", int(port)), timeout=TIMEOUT_S)
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def read(self):
        """The next packet as (first byte, body); None at the end of the stream."""
        while True:
            if len(self.buf) >= 2:
                n, shift, i = 0, 0, 1
                while i < len(self.buf) and i <= 4:
                    n |= (self.buf[i] & 0x7F) << shift
                    shift += 7
                    if not self.buf[i] & 0x80:
                        break
                    i += 1
                if i < len(self.buf) and len(self.buf) >= i + 1 + n:
                    first, body = self.buf[0], self.buf[i + 1:i + 1 + n]
                    self.buf = self.buf[i + 1 + n:]
                    return first, body
            data = self.sock.recv(65536)
            if not data:
                return None
            self.buf += data

    def connect_v5(self, client_id):
        self.send(packet(0x10, mqtt_str("MQTT") + bytes([5, 2, 0, 10, 0]) + mqtt_str(client_id)))
        reply = self.read()
        if reply is None or reply[0] != 0x20 or reply[1][1] != 0:
            fail("CONNACK expected, got %r" % (reply,))


def connect_packet(client_id, user=None, password=None, clean=True, expiry=0, will=None, keepalive=10):
    """A CONNECT of MQTT 5; will: (topic, payload) or (topic, payload, its property block)."""
    flags = 0x02 if clean else 0
    props = bytes([0x11]) + expiry.to_bytes(4, "big") if expiry else b""
    payload = mqtt_str(client_id)
    if will:
        flags |= 0x04
        will_props = will[2] if len(will) > 2 else b""
        payload += bytes([len(will_props)]) + will_props + mqtt_str(will[0]) + mqtt_str(will[1])
    if user is not None:
        flags |= 0x80
        payload += mqtt_str(user)
    if password is not None:
        flags |= 0x40
        payload += mqtt_str(password)
    return packet(0x10, mqtt_str("MQTT") + bytes([5, flags, keepalive >> 8, keepalive & 0xFF, len(props)]) + props +
                  payload)


def parse_publish(first, body):
    """(topic, payload, qos, dup, packet id) of an MQTT 5 PUBLISH."""
    n = body[0] << 8 | body[1]
    topic, at, qos = body[2:2 + n].decode(), 2 + n, (first >> 1) & 3
    pid = 0
    if qos:
        pid, at = body[at] << 8 | body[at + 1], at + 2
    props = body[at]  # short property blocks only: one byte of length
    return topic, body[at + 1 + props:], qos, bool(first & 0x08), pid


class User(Raw):
    """A raw MQTT 5 connection that logs in; every read bounded."""

    def __init__(self, port, client_id, user=None, password=None, clean=True, expiry=0, will=None, keepalive=10):
        Raw.__init__(self, port)
        self.send(connect_packet(client_id, user, password, clean, expiry, will, keepalive))
        reply = self.next("CONNACK of " + client_id)
        if reply[0] != 0x20 or reply[1][1] != 0:
            fail("%s: CONNACK expected, got %r" % (client_id, reply))
        self.session_present = bool(reply[1][0] & 1)
        self.connack = reply[1]

    def next(self, what):
        try:
            p = self.read()
        except socket.timeout:
            fail("timed out waiting for " + what)
        if p is None:
            fail("connection closed waiting for " + what)
        return p

    def subscribe(self, packet_id, topic_filter, qos):
        self.send(packet(0x82, bytes([packet_id >> 8, packet_id & 0xFF, 0]) + mqtt_str(topic_filter) + bytes([qos])))
        p = self.next("SUBACK")
        if p[0] != 0x90 or p[1][3:] != bytes([qos]):
            fail("SUBACK granting %d expected for %s, got %r" % (qos, topic_filter, p))

    def publish(self, topic, payload, qos=0):
        if qos == 0:
            return self.send(packet(0x30, mqtt_str(topic) + bytes([0]) + payload))
        self.send(packet(0x32, mqtt_str(topic) + bytes([0, 1, 0]) + payload))
        p = self.next("PUBACK")
        if p[0] != 0x40:
            fail("PUBACK expected, got %r" % (p,))

    def next_publish(self, what):
        while True:
            p = self.next(what)
            if p[0] >> 4 == 3:
                return parse_publish(*p)

    def until_pingresp(self):
        """Everything the broker sends before it answers a PINGREQ sent now."""
        self.send(packet(0xC0, b""))
        got = []
        while True:
            p = self.next("PINGRESP")
            if p[0] == 0xD0:
                return got
            got.append(p)

    def publishes_until_pingresp(self):
        return [parse_publish(*p) for p in self.until_pingresp() if p[0] >> 4 == 3]

    def disconnect(self):
        self.send(bytes([0xE0, 0]))
        self.sock.close()

    def disconnect_and_wait(self):
        """DISCONNECT, then read until the broker closes: it has ended the
        connection (and stored its session) before anything sent after."""
        self.send(bytes([0xE0, 0]))
        self.sock.settimeout(10)
        try:
            while self.sock.recv(4096):
                pass
        except OSError:
            pass
        self.sock.close()


def hijack(port):
    cid = "it21-victim"
    alice = User(port, cid, "alice", "alice-pw", clean=True, expiry=60)
    alice.subscribe(1, "it21/sec/#", 1)
    feed = User(port, "it21-hijack-feed", "feed", "feed-pw")
    feed.publish("it21/sec/x", b"secret", qos=1)
    got = alice.next_publish("alice's message")
    if got[:3] != ("it21/sec/x", b"secret", 1):
        fail("alice got %r" % (got,))  # and does not acknowledge it
    for user, password in (("bob", "bob-pw"), (None, None)):
        thief = User(port, cid, user, password, clean=False, expiry=60)
        if thief.session_present:
            fail("%s resumed alice's session (Session Present 1)" % user)
        stolen = thief.until_pingresp()
        if stolen:
            fail("%s got %r" % (user, stolen))
        thief.disconnect()
    for p in alice.until_pingresp():
        fail("alice got %r: taken over?" % (p,))
    alice.sock.close()  # abruptly: her session is stored with the message
    again = User(port, cid, "alice", "alice-pw", clean=False, expiry=60)
    if not again.session_present:
        fail("alice's own session is gone")
    if not [p for p in again.publishes_until_pingresp() if p[:4] == ("it21/sec/x", b"secret", 1, True)]:
        fail("alice's unacknowledged message was not resent")
    again.disconnect()
    feed.disconnect()
    print("ok hijack")


def revoked_store(port):
    alice = User(port, "it21-revoked", "alice", "alice-pw", clean=True, expiry=60)
    alice.subscribe(1, "it21/sec/#", 1)
    feed = User(port, "it21-revoked-feed", "feed", "feed-pw")
    for topic in ("it21/sec/x", "it21/sec/y", "it21/sec/z"):
        feed.publish(topic, b"kept", qos=1)
        got = alice.next_publish(topic)
        if got[:3] != (topic, b"kept", 1):
            fail("got %r for %s" % (got, topic))  # not acknowledged
    alice.sock.close()  # abruptly
    feed.disconnect()
    print("ok revoked-store")


def revoked_resume(port):
    alice = User(port, "it21-revoked", "alice", "alice-pw", clean=False, expiry=60)
    if not alice.session_present:
        fail("no session to resume")
    got = alice.publishes_until_pingresp()
    if [p[0] for p in got if p[0] != "it21/sec/z"]:
        fail("resent what alice may no longer receive live: %r" % (got,))
    if not [p for p in got if p[:4] == ("it21/sec/z", b"kept", 1, True)]:
        fail("the message alice may still receive was not resent: %r" % (got,))
    alice.disconnect()
    print("ok revoked-resume")


def will(mode, port):
    watcher = User(port, "it21-will-watcher", "feed", "feed-pw")
    watcher.subscribe(1, "it21/will/#", 0)
    doomed = User(port, "it21-doomed", "doomed", "doomed-pw", will=("it21/will/doomed", "gone"))
    print("ready", flush=True)
    if mode == "dropped":
        doomed.sock.close()  # no DISCONNECT: the Will is due
        got = watcher.next_publish("the Will")
        if got[:2] != ("it21/will/doomed", b"gone"):
            fail("got %r before the Will" % (got,))
        print("ok will dropped")
        return
    doomed.sock.settimeout(4 * TIMEOUT_S)  # the test reloads the users file meanwhile
    while doomed.read() is not None:  # the broker closes it, DISCONNECT 0x87 first
        pass
    # Two fences: in a tiered broker a Will from another access point is ordered
    # before the second one (it reached its gateway before the first was sent).
    for fence in (b"f1", b"f2"):
        watcher.publish("it21/will/fence", fence)
        got = watcher.next_publish("fence")
        if got[:2] != ("it21/will/fence", fence):
            fail("got %r: the Will of a removed user" % (got,))
    watcher.disconnect()
    print("ok will removed")


WILL_USER_PROPERTY = bytes([0x26]) + mqtt_str("k") + mqtt_str("v")


def will_delay_props(seconds):
    return bytes([0x18]) + seconds.to_bytes(4, "big") + WILL_USER_PROPERTY


def next_will(watcher, what):
    """The next PUBLISH's topic, payload and raw body."""
    while True:
        first, body = watcher.next(what)
        if first >> 4 == 3:
            topic, payload = parse_publish(first, body)[:2]
            return topic, payload, body


def will_delay(port):
    watcher = User(port, "it21-wd-watcher")
    watcher.subscribe(1, "it21/wd/#", 0)
    # A session that outlives its connection: the Will waits for its 1 s delay.
    doomed = User(port, "it21-wd-doomed", expiry=60, will=("it21/wd/gone", "gone", will_delay_props(1)))
    doomed.sock.close()
    closed = time.monotonic()
    topic, payload, body = next_will(watcher, "the delayed Will")
    waited = time.monotonic() - closed
    if (topic, payload) != ("it21/wd/gone", b"gone"):
        fail("got %r, %r instead of the Will" % (topic, payload))
    if waited < 0.9:  # the clocks of two processes: a bound below the delay, never above
        fail("the Will came %.2f s after the connection closed, before its 1 s Will Delay" % waited)
    if WILL_USER_PROPERTY not in body:
        fail("the Will came without its User Property: %r" % body)
    # Resumed before its 2 s delay ended: the Will is never published [MQTT-3.1.3-9].
    back = User(port, "it21-wd-back", expiry=60, will=("it21/wd/back", "never", will_delay_props(2)))
    back.sock.close()
    again = User(port, "it21-wd-back", clean=False, expiry=60)
    if not again.session_present:
        fail("the session was not resumed")
    time.sleep(3)  # past its delay: a Will still pending would be published by now
    for fence in (b"f1", b"f2"):  # the second fence orders a Will from another access point before it
        watcher.publish("it21/wd/fence", fence)
        topic, payload, _ = next_will(watcher, "fence")
        if (topic, payload) != ("it21/wd/fence", fence):
            fail("got %r, %r: the Will of a resumed session" % (topic, payload))
    again.disconnect()
    # Clean Start 1 ends the old session: its Will goes at once, not after its 60 s delay.
    ended = User(port, "it21-wd-ended", expiry=120, will=("it21/wd/ended", "ended", will_delay_props(60)))
    ended.sock.close()
    fresh = User(port, "it21-wd-ended", clean=True)
    topic, payload, _ = next_will(watcher, "the Will of a session that a new one ended")
    if (topic, payload) != ("it21/wd/ended", b"ended"):
        fail("got %r, %r instead of the ended session's Will" % (topic, payload))
    fresh.disconnect()
    watcher.disconnect()
    print("ok will-delay")


def catch_up(port):
    """A resumed session gets the last value of what was published while it
    was away, and nothing it had already: not a channel's RETAIN 0 value from
    before its subscription, not a message it was sent live."""
    pub = User(port, "it21-cu-pub")
    watcher = User(port, "it21-cu-watcher")
    watcher.subscribe(1, "it21/cu/#", 0)

    def published(topic, payload):  # applied by the channel's owner: the watcher has it
        pub.publish(topic, payload, qos=1)
        got = next_will(watcher, topic)[:2]
        if got != (topic, payload):
            fail("the watcher got %r instead of %r" % (got, (topic, payload)))

    published("it21/cu/old", b"before the subscription")
    sub = User(port, "it21-cu-sub", expiry=60)
    sub.subscribe(1, "it21/cu/#", 0)
    published("it21/cu/seen", b"live")
    got = next_will(sub, "the live message")[:2]
    if got != ("it21/cu/seen", b"live"):
        fail("got %r instead of the live message" % (got,))
    sub.disconnect_and_wait()  # else "new" may still reach the closing connection, live
    published("it21/cu/new", b"while away")
    again = User(port, "it21-cu-sub", clean=False, expiry=60)
    if not again.session_present:
        fail("the session was not resumed")
    for fence in (b"f1", b"f2"):
        pub.publish("it21/cu/fence", fence, qos=1)
    got = []
    while True:
        topic, payload, _ = next_will(again, "the catch-up and the fences")
        if topic == "it21/cu/fence":
            break
        got.append((topic, payload))
    if got != [("it21/cu/new", b"while away")]:
        fail("a resumed session got %r; only the message published while it was away is new to it" % (got,))
    again.disconnect()
    print("ok catch-up")


def server_keepalive(port):
    """The broker caps the keep-alive at 60 s (mqtt_max_keepalive_s): a client
    asking more, or none, is told 60 in CONNACK (Server Keep Alive 0x13); one
    asking less is not told anything."""
    told = bytes([0x13, 0, 60])
    for asked in (120, 0):
        c = User(port, "it21-ka-%d" % asked, keepalive=asked)
        if told not in c.connack:
            fail("keep alive %d: no Server Keep Alive 60 in CONNACK %r" % (asked, c.connack))
        c.disconnect()
    c = User(port, "it21-ka-30", keepalive=30)
    if bytes([0x13]) in c.connack[3:]:
        fail("keep alive 30: a Server Keep Alive in CONNACK %r" % c.connack)
    c.disconnect()
    print("ok server-keepalive")


def shared_users(port):
    feed = User(port, "it21-sh-feed", "feed", "feed-pw")
    bob = User(port, "it21-sh-bob", "bob", "bob-pw")
    for member in (feed, bob):
        member.subscribe(1, "$share/g/it21/sh/#", 0)
    pub = User(port, "it21-sh-pub", "feed", "feed-pw")
    topics = ["it21/sh/%d" % i for i in range(20)]
    for topic in topics:
        pub.publish(topic, b"v")
    seen = set()
    while len(seen) < len(topics):
        seen.add(feed.next_publish("every channel: %d of 20 so far" % len(seen))[0])
    got = bob.next_publish("bob's channel")
    if got[0] != "it21/sh/0":
        fail("bob got %r" % (got,))
    for c in (feed, bob, pub):
        c.disconnect()
    print("ok shared-users")


def qos2(port):
    raw = Raw(port)
    raw.connect_v5("it21-qos2")
    raw.send(packet(0x82, bytes([0, 1, 0]) + mqtt_str("it21/qos2") + bytes([0])))
    publish = mqtt_str("it21/qos2") + bytes([0, 7, 0]) + b"x"
    raw.send(packet(0x34, publish))         # QoS 2, id 7
    raw.send(packet(0x3C, publish))         # the same, resent with DUP
    raw.send(packet(0x62, bytes([0, 7])))   # PUBREL 7
    raw.send(packet(0xC0, b""))             # PINGREQ
    # A QoS 0 fence on the same topic: a second copy of "x" would come before it.
    raw.send(packet(0x30, mqtt_str("it21/qos2") + bytes([0]) + b"end"))
    acks, messages = [], []
    while not (messages[-1:] == [b"end"] and "d0:" in acks):
        p = raw.read()
        if p is None:
            fail("connection closed after %r %r" % (acks, messages))
        if p[0] >> 4 == 3:
            messages.append(p[1][len(mqtt_str("it21/qos2")) + 1:])  # QoS 0, no properties
        else:
            acks.append("%02x:%s" % (p[0], p[1].hex()))
    # SUBACK; PUBREC for the PUBLISH and again for its resend; PUBCOMP; PINGRESP.
    expected = ["90:00010000", "50:0007", "50:0007", "70:0007", "d0:"]
    if acks != expected:
        fail("got %r, expected %r" % (acks, expected))
    if messages != [b"x", b"end"]:
        fail("the QoS 2 message was not delivered exactly once: %r" % messages)
    print("ok qos2")


def malformed(port):
    raw = Raw(port)
    raw.connect_v5("it21-malformed")
    raw.send(packet(0x36, mqtt_str("it21/x") + bytes([0, 1, 0]) + b"x"))  # QoS 3
    p = raw.read()
    if p is None or p[0] != 0xE0 or p[1][:1] != b"\x81":
        fail("DISCONNECT 0x81 expected, got %r" % (p,))
    if raw.read() is not None:
        fail("connection still open after DISCONNECT")
    print("disconnect 0x81")


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "paho":
        paho(sys.argv[2], sys.argv[3])
    elif mode == "qos2":
        qos2(sys.argv[2])
    elif mode == "malformed":
        malformed(sys.argv[2])
    elif mode == "resume":
        resume(sys.argv[2])
    elif mode in ("props", "request", "expired", "retain", "resubscribe", "hijack", "revoked-store", "revoked-resume",
                  "shared-users", "will-delay", "server-keepalive", "catch-up"):
        globals()[mode.replace("-", "_")](sys.argv[2])
    elif mode == "will":
        will(sys.argv[2], sys.argv[3])
    else:
        fail("unknown mode " + mode)
