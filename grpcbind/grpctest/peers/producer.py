"""An AAEP producer over gRPC written with Python's grpcio, for interop tests.

usage: producer.py PBDIR EVENTS MANIFEST REQUEST_OUT

PBDIR holds aaep_pb2.py (protoc --python_out). EVENTS is a file of JSON
lines sent, byte for byte, after the subscription.accepted; MANIFEST is
GetManifest's answer; the first message of each stream is appended to
REQUEST_OUT. Prints "PORT n" once listening; ends a stream with status OK
after the events when the line "END" follows them, else keeps it open.
"""
import sys
from concurrent import futures

sys.path.insert(0, sys.argv[1])
import grpc  # noqa: E402
import aaep_pb2  # noqa: E402

EVENTS = open(sys.argv[2], "rb").read().split(b"\n")
MANIFEST = open(sys.argv[3], "rb").read()
REQUEST_OUT = sys.argv[4]


def subscribe(requests, context):
    first = next(requests)
    with open(REQUEST_OUT, "ab") as f:
        f.write(first.json + b"\n")
    yield aaep_pb2.AaepMessage(
        json=b'{"type":"subscription.accepted","subscription_id":"sub_py","aaep_version":"1.0.0",'
        b'"producer":{"agent_id":"python-grpcio"},"honored_capabilities":{}}',
        message_type="subscription.accepted")
    for line in EVENTS:
        if line == b"END":
            return
        if line:
            yield aaep_pb2.AaepMessage(json=line)
    for _ in requests:  # until the subscriber half-closes or cancels
        pass


def get_manifest(request, context):
    return aaep_pb2.Manifest(json=MANIFEST)


handlers = grpc.method_handlers_generic_handler("aaep.v1.AaepService", {
    "Subscribe": grpc.stream_stream_rpc_method_handler(
        subscribe,
        request_deserializer=aaep_pb2.AaepMessage.FromString,
        response_serializer=aaep_pb2.AaepMessage.SerializeToString),
    "GetManifest": grpc.unary_unary_rpc_method_handler(
        get_manifest,
        request_deserializer=aaep_pb2.GetManifestRequest.FromString,
        response_serializer=aaep_pb2.Manifest.SerializeToString),
})
server = grpc.server(futures.ThreadPoolExecutor(max_workers=4),
                     options=[("grpc.max_send_message_length", 64 << 20)])
server.add_generic_rpc_handlers((handlers,))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
print("PORT %d" % port, flush=True)
try:
    sys.stdin.read()  # the test closes stdin to stop us
finally:
    server.stop(0)
