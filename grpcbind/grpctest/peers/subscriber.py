"""An AAEP subscriber over gRPC written with Python's grpcio, for interop tests.

usage: subscriber.py PBDIR ADDR

Sends a subscription.request, then reads the stream; answers each
awaiting.confirmation with a confirmation.reply (decision "accept") on the
same stream. Prints every message received as "RECV <message_type> <hex of
the json>", and the manifest as "MANIFEST <hex>", one per line; "END <code>"
when the stream ends (code: the gRPC status name).
"""
import datetime
import json
import queue
import sys

sys.path.insert(0, sys.argv[1])
import grpc  # noqa: E402
import aaep_pb2  # noqa: E402

channel = grpc.insecure_channel(sys.argv[2], options=[("grpc.max_receive_message_length", 64 << 20)])
get_manifest = channel.unary_unary(
    "/aaep.v1.AaepService/GetManifest",
    request_serializer=aaep_pb2.GetManifestRequest.SerializeToString,
    response_deserializer=aaep_pb2.Manifest.FromString)
subscribe = channel.stream_stream(
    "/aaep.v1.AaepService/Subscribe",
    request_serializer=aaep_pb2.AaepMessage.SerializeToString,
    response_deserializer=aaep_pb2.AaepMessage.FromString)

print("MANIFEST " + get_manifest(aaep_pb2.GetManifestRequest(), timeout=10).json.hex(), flush=True)

outbox = queue.Queue()
outbox.put(aaep_pb2.AaepMessage(json=json.dumps({
    "type": "subscription.request", "aaep_version": "1.0.0",
    "subscriber_id": "python-grpcio", "subscriber_name": "python-grpcio",
    "capabilities": {"supports_confirmation_reply": True, "supports_clarification_reply": True},
}).encode(), message_type="subscription.request"))


def requests():
    while True:
        m = outbox.get()
        if m is None:
            return
        yield m


code = "OK"
subscription_id = ""
try:
    for msg in subscribe(requests(), timeout=60):
        print("RECV %s %s" % (msg.message_type or "-", msg.json.hex()), flush=True)
        ev = json.loads(msg.json)
        if ev.get("type") == "subscription.accepted":
            subscription_id = ev.get("subscription_id", "")
        if ev.get("type", "").endswith("awaiting.confirmation"):
            outbox.put(aaep_pb2.AaepMessage(json=json.dumps({
                "type": "confirmation.reply", "reply_token": ev["reply_token"],
                "decision": "accept", "subscription_id": subscription_id,
                "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z"),
            }).encode(), message_type="confirmation.reply"))
except grpc.RpcError as e:
    code = e.code().name
outbox.put(None)
print("END " + code, flush=True)
