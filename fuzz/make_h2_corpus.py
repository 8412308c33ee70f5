#!/usr/bin/env python3
"""Writes the seed corpora of the h2_session and h2_frames fuzz targets (docs/fuzzing.md): valid
client exchanges with the gRPC engine's own HTTP/2 framing, frame by frame (HPACK by hand:
indexed, literal and incrementally indexed fields; protobuf by hand).

h2_session inputs are one option byte (fuzz/h2_session_fuzz.cc: bits 0-2 the read size, bit 3 a
shutdown midway, bit 4 an idle GOAWAY at the end, bit 5 a second of the clock between reads, bit 6
the input brings its own preface) and the client's frames after the preface; h2_frames inputs
are the frames alone.

Usage: python3 fuzz/make_h2_corpus.py   (rewrites fuzz/corpus/h2_session and h2_frames)
"""
import os
import struct

DATA, HEADERS, PRIORITY, RST, SETTINGS, PUSH, PING, GOAWAY, WINDOW, CONT = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIO = 1, 1, 4, 8, 0x20
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(t, flags, stream, payload=b""):
    n = len(payload)
    return bytes([n >> 16 & 255, n >> 8 & 255, n & 255, t, flags]) + struct.pack(">I", stream) + payload


def settings(**kv):
    ids = {"table": 1, "push": 2, "streams": 3, "window": 4, "frame": 5, "list": 6}
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", ids[k], v) for k, v in kv.items()))


def lit(name, value, indexing=False):
    # A literal field with a new name: without indexing (0x00) or with incremental indexing (0x40).
    name, value = name.encode(), value.encode()
    return bytes([0x40 if indexing else 0, len(name)]) + name + bytes([len(value)]) + value


def request_block(path, extra=(), indexing=False):
    b = b"\x83\x86"  # :method POST, :scheme http (static table)
    b += lit(":path", path) + lit(":authority", "localhost")
    b += lit("content-type", "application/grpc", indexing) + lit("te", "trailers", indexing)
    for k, v in extra:
        b += lit(k, v)
    return b


def varint(v):
    out = b""
    while True:
        if v < 0x80:
            return out + bytes([v])
        out += bytes([v & 0x7F | 0x80])
        v >>= 7


def pb_str(field, s):
    s = s.encode() if isinstance(s, str) else s
    return varint(field << 3 | 2) + varint(len(s)) + s


def pb_int(field, v):
    return varint(field << 3) + varint(v)


def grpc(msg):
    return b"\x00" + struct.pack(">I", len(msg)) + msg


DQ = "/chronoq.v1.DelayQueue/"


def unary(stream, method, msg, extra=()):
    return (frame(HEADERS, END_HEADERS, stream, request_block(DQ + method, extra))
            + frame(DATA, END_STREAM, stream, grpc(msg)))


def send_msg(msg_id, payload="hello", topic="t"):
    return pb_str(1, topic) + pb_str(2, msg_id) + pb_str(3, payload) + pb_int(4, 0)


def seeds():
    s = {}
    start = settings()
    s["unary-send"] = (0x05, start + unary(1, "Send", send_msg("m1")))
    # Two calls on one connection, the second's fields indexed since the first.
    second = b"\x83\x86" + lit(":path", DQ + "Send") + lit(":authority", "localhost") + b"\xbf\xbe"
    s["two-sends-indexed"] = (0x05, start
                              + frame(HEADERS, END_HEADERS, 1, request_block(DQ + "Send", (), True))
                              + frame(DATA, END_STREAM, 1, grpc(send_msg("a")))
                              + frame(HEADERS, END_HEADERS, 3, second)
                              + frame(DATA, END_STREAM, 3, grpc(send_msg("b"))))
    # Consume: a message sent, a subscription, its delivery acked, the stream ended.
    subscribe = pb_str(1, pb_str(1, "t") + pb_int(2, 2))
    ack = pb_str(2, pb_str(1, "t") + pb_str(2, "m1"))
    s["consume-ack"] = (0x23, start + unary(1, "Send", send_msg("m1"))
                        + frame(HEADERS, END_HEADERS, 3, request_block(DQ + "Consume"))
                        + frame(DATA, 0, 3, grpc(subscribe))
                        + frame(PING, 0, 0, b"12345678")
                        + frame(DATA, 0, 3, grpc(ack))
                        + frame(DATA, 0, 3, grpc(pb_int(3, 1)))
                        + frame(DATA, END_STREAM, 3, b""))
    s["health-check"] = (0x04, start + frame(HEADERS, END_HEADERS, 1,
                                             request_block("/grpc.health.v1.Health/Check"))
                         + frame(DATA, END_STREAM, 1, grpc(b"")))
    s["health-watch-shutdown"] = (0x0b, start + frame(HEADERS, END_HEADERS, 1,
                                                      request_block("/grpc.health.v1.Health/Watch"))
                                  + frame(DATA, END_STREAM, 1, grpc(b""))
                                  + frame(PING, 0, 0, b"abcdefgh") + frame(PING, 0, 0, b"abcdefgh"))
    s["reflection-list"] = (0x05, start + frame(HEADERS, END_HEADERS, 1, request_block(
        "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"))
        + frame(DATA, END_STREAM, 1, grpc(pb_str(7, "*"))))
    # A long poll parked, then reset by the client; another one whose deadline passes.
    pull = pb_str(1, "t") + pb_int(4, 5000)
    s["pull-reset"] = (0x03, start + unary(1, "Pull", pull)
                       + frame(RST, 0, 1, struct.pack(">I", 8))
                       + unary(3, "Pull", pull, (("grpc-timeout", "1m"),))
                       + frame(WINDOW, 0, 0, struct.pack(">I", 1000)))
    # Flow control: a small initial window, a large message read back through WINDOW_UPDATEs.
    big = "x" * 5000
    s["flow-control-large"] = (0x05, settings(window=1000, frame=16384) + unary(1, "Send", send_msg("big", big))
                               + unary(3, "Get", pb_str(1, "t") + pb_str(2, "big"))
                               + frame(WINDOW, 0, 3, struct.pack(">I", 3000))
                               + frame(WINDOW, 0, 3, struct.pack(">I", 3000))
                               + frame(SETTINGS, ACK, 0))
    # One request over padded DATA frames, its header block over CONTINUATIONs, with priority.
    block = request_block(DQ + "Send")
    msg = grpc(send_msg("p"))
    s["padded-continuation"] = (0x02, start
                                + frame(HEADERS, PADDED | PRIO, 1, b"\x03" + b"\x00\x00\x00\x00\x10"
                                        + block[:10] + b"\0\0\0")
                                + frame(CONT, 0, 1, block[10:30])
                                + frame(CONT, END_HEADERS, 1, block[30:])
                                + frame(DATA, PADDED, 1, b"\x02" + msg[:7] + b"\0\0")
                                + frame(DATA, END_STREAM, 1, msg[7:])
                                + frame(PRIORITY, 0, 1, b"\0\0\0\0\x10"))
    # Streams interleaved, the client's GOAWAY at the end.
    s["interleaved-goaway"] = (0x24, start
                               + frame(HEADERS, END_HEADERS, 1, request_block(DQ + "Send"))
                               + frame(HEADERS, END_HEADERS, 3, request_block(DQ + "Send"))
                               + frame(DATA, 0, 3, grpc(send_msg("i3"))[:4])
                               + frame(DATA, END_STREAM, 1, grpc(send_msg("i1")))
                               + frame(DATA, END_STREAM, 3, grpc(send_msg("i3"))[4:])
                               + frame(GOAWAY, 0, 0, struct.pack(">II", 0, 0)))
    return s


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    for target in ("h2_session", "h2_frames"):
        d = os.path.join(root, target)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
    for name, (opts, body) in seeds().items():
        with open(os.path.join(root, "h2_session", name), "wb") as f:
            f.write(bytes([opts]) + body)
        with open(os.path.join(root, "h2_frames", name), "wb") as f:
            f.write(body)


if __name__ == "__main__":
    main()
