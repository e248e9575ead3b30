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
"""
import sys
import threading

TIMEOUT_S = 5


def fail(why):
    print("FAIL " + why)
    sys.exit(1)


def connect(port, client_id, version, expiry):
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

    def on_message(_c, _u, msg):
        state["got"] = (msg.topic, msg.payload)
        state["message"].set()
    client.on_message = on_message
    client.loop_start()
    if not state["connack"].wait(TIMEOUT_S):
        fail("no CONNACK")
    return client, state


def close(client):
    client.disconnect()
    client.loop_stop()


def leave(port, client_id, version, expiry):
    client, state = connect(port, client_id, version, expiry)
    if state["present"]:
        fail("a new session said Session Present")
    client.subscribe("it31/%s/#" % client_id, qos=1)
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


def absent(port, client_id):
    client, state = connect(port, client_id, "5", 0)
    close(client)
    if state["present"]:
        fail("Session Present 1: an expired session came back")
    print("ok absent")


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "leave":
        leave(*sys.argv[2:6])
    elif mode == "resume":
        resume(*sys.argv[2:6])
    elif mode == "absent":
        absent(*sys.argv[2:4])
    else:
        fail("unknown mode " + mode)
