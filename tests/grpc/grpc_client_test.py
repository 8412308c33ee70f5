#!/usr/bin/python3
"""An independent client of chronoq's gRPC API: Python's grpcio (Debian python3-grpcio) with
stubs generated at test time from proto/chronoq/v1/delay_queue.proto, against the real
`chronoq serve` binary (--test-clock, on the storage given).

It drives every method, Consume included (credit, acks on the stream, a broken stream's messages
coming again after their ack timeout), the status codes and sentences (the same bad values over
HTTP and gRPC give the same sentence), deadlines, health, reflection, and the end of streams on
SIGTERM.

The stubs: `protoc` (protobuf-compiler) with grpc_python_plugin (protobuf-compiler-grpc). Debian
12's python3-grpc-tools (1.14) bundles protoc 3.6, which refuses the proto's `optional` fields
(proto3 optional needs protoc >= 3.12), so `python3 -m grpc_tools.protoc` is used only when its
protoc is recent enough.

Usage: grpc_client_test.py --binary build/chronoq --proto-dir proto --storage memory|embedded|redis
       [--grpc-engine h2|nghttp2|grpc++] [--skip test_name]...
"""
import argparse
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

import grpc

ARGS = None
pb = None  # chronoq.v1.delay_queue_pb2
pbg = None  # chronoq.v1.delay_queue_pb2_grpc
refl = None  # chronoq.reflection.v1alpha.reflection_pb2 (gRPC's reflection messages, a copy)


def generate_stubs(proto_dir, out_dir):
    proto = "chronoq/v1/delay_queue.proto"
    # The reflection messages: their field numbers are gRPC's (messages only, no stub).
    subprocess.run(["protoc", "-I" + proto_dir, "--python_out=" + out_dir,
                    "chronoq/reflection/v1alpha/reflection.proto"], check=True)
    try:
        from grpc_tools import protoc as grpc_protoc  # noqa: F401
        rc = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I" + proto_dir,
                             "--python_out=" + out_dir, "--grpc_python_out=" + out_dir, proto],
                            capture_output=True, text=True)
        if rc.returncode == 0:
            return
    except ImportError:
        pass
    plugin = shutil.which("grpc_python_plugin")
    subprocess.run(["protoc", "-I" + proto_dir, "--python_out=" + out_dir,
                    "--grpc_python_out=" + out_dir,
                    "--plugin=protoc-gen-grpc_python=" + plugin, proto], check=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`chronoq serve` on free ports, HTTP and gRPC, with the test clock."""

    def __init__(self, work):
        self.work = work
        self.redis = None
        args = [ARGS.binary, "serve", "--listen=127.0.0.1:0", "--grpc-listen=127.0.0.1:0",
                "--test-clock", "--log-level=warn", "--storage=" + ARGS.storage,
                "--grpc-engine=" + ARGS.grpc_engine]
        if ARGS.storage == "embedded":
            args.append("--data-dir=" + os.path.join(work, "data"))
        if ARGS.storage == "redis":
            port = free_port()
            self.redis = subprocess.Popen(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                try:
                    socket.create_connection(("127.0.0.1", port), 0.1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            args.append("--redis-url=redis://127.0.0.1:%d" % port)
        self.log = open(os.path.join(work, "server.log"), "w")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.log, text=True)
        http_line = self.proc.stdout.readline().strip()
        grpc_line = self.proc.stdout.readline().strip()
        if not grpc_line.startswith("chronoq gRPC listening on "):
            raise RuntimeError("server did not start: %r %r\n%s" % (
                http_line, grpc_line, open(os.path.join(work, "server.log")).read()))
        self.http = "http://127.0.0.1:" + http_line.rsplit(":", 1)[1]
        self.grpc = "127.0.0.1:" + grpc_line.rsplit(":", 1)[1]

    def sanitizer_report(self):
        """The server's log when it holds a sanitizer's report (a sanitized build), else None."""
        with open(os.path.join(self.work, "server.log"), errors="replace") as f:
            text = f.read()
        for mark in ("Sanitizer", "runtime error:"):
            if mark in text:
                return text
        return None

    def stop(self, sig=signal.SIGTERM):
        if self.log.closed:
            return self.proc.returncode
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        rc = self.proc.wait(10)
        self.proc.stdout.close()
        self.log.close()
        if self.redis is not None:
            self.redis.terminate()
            self.redis.wait(5)
        return rc

    def http_post(self, op, params):
        data = urllib.parse.urlencode(params).encode()
        with urllib.request.urlopen(self.http + "/camellia/delayQueue/" + op, data) as r:
            return json.loads(r.read())

    def http_call(self, method, path, params=None, body=None):
        """Any answer, HTTP 400 included, as parsed JSON."""
        url = self.http + path
        data = None
        headers = {}
        if method == "GET" and params:
            url += "?" + urllib.parse.urlencode(params)
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        elif params is not None:
            data = urllib.parse.urlencode(params).encode()
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            return json.loads(e.read())

    def advance(self, millis):
        with urllib.request.urlopen(self.http + "/chronoq/test/advanceClock",
                                    ("millis=%d" % millis).encode()) as r:
            return json.loads(r.read())


class GrpcApiTest(unittest.TestCase):
    server = None

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="chronoq-grpc-")
        cls.server = Server(cls.work)
        cls.channel = grpc.insecure_channel(cls.server.grpc)
        cls.stub = pbg.DelayQueueStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        try:
            if cls.server is not None:
                rc = cls.server.stop()
                report = cls.server.sanitizer_report()
                if rc != 0 or report:
                    raise AssertionError("the server exited with %s\n%s" % (rc, report or ""))
        finally:
            shutil.rmtree(cls.work, ignore_errors=True)

    def topic(self):
        return self.id().rsplit(".", 1)[1][:60]

    def send(self, topic, msg_id, delay=0, **kw):
        return self.stub.Send(pb.SendRequest(topic=topic, msg_id=msg_id, msg="m-" + msg_id,
                                             delay_millis=delay, **kw), timeout=10)

    def error(self, fn, request):
        with self.assertRaises(grpc.RpcError) as cm:
            fn(request, timeout=10)
        return cm.exception.code(), cm.exception.details()

    # ---- every unary method

    def test_messages_methods(self):
        t = self.topic()
        r = self.send(t, "a", delay=5000, priority=3)
        self.assertEqual((r.message.status, r.message.priority, r.existing), (1, 3, False))
        self.assertTrue(self.send(t, "a").existing)
        got = self.stub.Get(pb.MessageRef(topic=t, msg_id="a"), timeout=10)
        self.assertEqual((got.msg, got.status), ("m-a", 1))
        counted = self.stub.Count(pb.CountRequest(topic=t, msg_id="a", count=2), timeout=10)
        self.assertEqual(counted.count, 2)
        upd = self.stub.Update(pb.UpdateRequest(topic=t, msg_id="a", delay_millis=0,
                                                msg="new"), timeout=10)
        self.assertEqual((upd.msg, upd.status), ("new", 2))
        page = self.stub.List(pb.ListRequest(topic=t, status=2), timeout=10)
        self.assertEqual([m.msg_id for m in page.messages], ["a"])
        self.assertEqual(page.next_cursor, "")
        info = self.stub.TopicInfo(pb.TopicRef(topic=t), timeout=10)
        self.assertEqual((info.waiting, info.ready, info.consuming), (0, 1, 0))
        self.assertEqual(len(info.waiting_buckets), 9)
        topics = self.stub.ListTopics(pb.ListTopicsRequest(), timeout=10)
        self.assertIn(t, [x.topic for x in topics.topics])
        # The last completed interval's figures, as getMonitorData's `data` (the same topics).
        monitor = self.stub.GetMonitorData(pb.GetMonitorDataRequest(), timeout=10)
        http_monitor = self.server.http_call("GET", "/camellia/delayQueue/getMonitorData")
        self.assertEqual([x.topic for x in monitor.request_stats_list],
                         [x["topic"] for x in http_monitor["data"]["requestStatsList"]])
        pulled = self.stub.Pull(pb.PullRequest(topic=t, batch=10, ack_timeout_millis=60000),
                                timeout=10)
        self.assertEqual([(m.msg_id, m.retry, m.status) for m in pulled.messages], [("a", 1, 3)])
        touched = self.stub.Touch(pb.TouchRequest(topic=t, msg_id="a",
                                                  ack_timeout_millis=90000), timeout=10)
        self.assertEqual(touched.status, 3)
        acked = self.stub.Ack(pb.AckRequest(topic=t, ack=["a", "zz"]), timeout=10)
        self.assertEqual([(x.msg_id, x.ack, x.code) for x in acked.results],
                         [("a", True, 0), ("zz", True, grpc.StatusCode.NOT_FOUND.value[0])])
        self.assertTrue(acked.results[1].msg)
        self.assertEqual(self.stub.Get(pb.MessageRef(topic=t, msg_id="a"), timeout=10).status, 4)
        self.send(t, "b", delay=60000)
        self.stub.Delete(pb.DeleteRequest(topic=t, msg_id="b"), timeout=10)
        self.assertEqual(self.stub.Get(pb.MessageRef(topic=t, msg_id="b"), timeout=10).status, 7)

    def test_send_batch(self):
        t = self.topic()
        r = self.stub.SendBatch(pb.SendBatchRequest(topic=t, msgs=[
            pb.SendRequest(msg_id="a", msg="x", delay_millis=0),
            pb.SendRequest(msg_id="b", msg="y", delay_millis=0, priority=11),
            pb.SendRequest(topic="other", msg_id="c", msg="z", delay_millis=0),
        ]), timeout=10)
        self.assertEqual([(x.code, x.message.msg_id) for x in r.results],
                         [(0, "a"), (3, ""), (3, "")])
        self.assertEqual(r.results[1].msg, "msgs[1]: priority must be between 0 and 9, got 11")
        self.assertEqual(r.results[2].msg,
                         "msgs[2]: topic is given once for the whole batch, not per message")
        code, text = self.error(self.stub.SendBatch, pb.SendBatchRequest(topic=t))
        self.assertEqual((code, text), (grpc.StatusCode.INVALID_ARGUMENT,
                                        "msgs is empty; give at least one message"))

    def test_topic_config_purge_and_redrive(self):
        t, dlq = self.topic(), self.topic() + "-dlq"
        c = self.stub.SetTopicConfig(pb.TopicConfig(topic=t, max_retry=0,
                                                    dead_letter_topic=dlq), timeout=10)
        self.assertEqual((c.max_retry, c.dead_letter_topic, c.sources["maxRetry"]),
                         (0, dlq, "topic"))
        self.assertEqual(self.stub.GetTopicConfig(pb.TopicRef(topic=t), timeout=10).max_retry, 0)
        self.send(t, "a")
        self.stub.Pull(pb.PullRequest(topic=t), timeout=10)
        nacked = self.stub.Ack(pb.AckRequest(topic=t, nack=["a"], reason="boom"), timeout=10)
        self.assertEqual(nacked.results[0].code, 0)
        dead = self.stub.List(pb.ListRequest(topic=dlq, status=2), timeout=10)
        self.assertEqual([(m.msg_id, m.dead_letter.topic) for m in dead.messages], [("a", t)])
        redriven = self.stub.Redrive(pb.RedriveRequest(topic=dlq), timeout=10)
        self.assertEqual(redriven.count, 1)
        self.stub.DeleteTopicConfig(pb.TopicRef(topic=t), timeout=10)
        self.assertEqual(self.stub.GetTopicConfig(pb.TopicRef(topic=t), timeout=10)
                         .sources["maxRetry"], "server")
        self.send(t, "b", delay=60000)
        purged = self.stub.Purge(pb.PurgeRequest(topic=t), timeout=10)
        self.assertEqual(purged.count, 2)  # "a" again, and "b"
        self.stub.SetTopicConfig(pb.TopicConfig(topic=t, paused=True), timeout=10)
        self.assertTrue(self.stub.GetTopicConfig(pb.TopicRef(topic=t), timeout=10).paused)

    # ---- errors: codes, HTTP's sentences, limits, deadlines

    def test_status_codes(self):
        t = self.topic()
        code, _ = self.error(self.stub.Get, pb.MessageRef(topic=t, msg_id="nope"))
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        self.send(t, "w", delay=60000)
        code, _ = self.error(self.stub.Touch, pb.TouchRequest(topic=t, msg_id="w"))
        self.assertEqual(code, grpc.StatusCode.FAILED_PRECONDITION)
        self.stub.SetTopicConfig(pb.TopicConfig(topic=t, capacity=1), timeout=10)
        code, text = self.error(self.stub.Send, pb.SendRequest(topic=t, msg="x", delay_millis=0))
        self.assertEqual((code, text), (grpc.StatusCode.RESOURCE_EXHAUSTED,
                                        "topic '%s' is full: 1 messages in life, capacity 1" % t))
        code, _ = self.error(self.stub.Send, pb.SendRequest(topic=t, msg="x" * (5 << 20),
                                                            delay_millis=0))
        self.assertEqual(code, grpc.StatusCode.RESOURCE_EXHAUSTED)  # beyond max-msg-bytes + 64 KiB

    def test_bad_input_gets_the_http_sentence(self):
        """The same bad values over HTTP and gRPC: INVALID_ARGUMENT (HTTP 400), same sentence."""
        t = self.topic()
        self.send(t, "m", delay=60000)
        S = pb.SendRequest
        long_id = "x" * 256
        cases = [
            # (HTTP operation, HTTP parameters, gRPC method, gRPC request)
            ("sendMsg", {"topic": t, "msg": "x", "delayMillis": 0, "priority": 12},
             self.stub.Send, S(topic=t, msg="x", delay_millis=0, priority=12)),
            ("sendMsg", {"topic": t, "msgId": long_id, "msg": "x", "delayMillis": 0},
             self.stub.Send, S(topic=t, msg_id=long_id, msg="x", delay_millis=0)),
            ("sendMsg", {"topic": t, "msg": "x", "delayMillis": 10 ** 15},
             self.stub.Send, S(topic=t, msg="x", delay_millis=10 ** 15)),
            ("sendMsg", {"topic": t, "msg": "x", "triggerTime": -5},
             self.stub.Send, S(topic=t, msg="x", trigger_time=-5)),
            ("sendMsg", {"topic": t, "msg": "x", "delayMillis": 0, "countTrigger": -1},
             self.stub.Send, S(topic=t, msg="x", delay_millis=0, count_trigger=-1)),
            ("sendMsg", {"topic": "a\x01b", "msg": "x", "delayMillis": 0},
             self.stub.Send, S(topic="a\x01b", msg="x", delay_millis=0)),
            ("sendMsg", {"topic": "x" * 300, "msg": "x", "delayMillis": 0},
             self.stub.Send, S(topic="x" * 300, msg="x", delay_millis=0)),
            ("updateMsg", {"topic": t, "msgId": "m", "priority": 10},
             self.stub.Update, pb.UpdateRequest(topic=t, msg_id="m", priority=10)),
            ("countMsg", {"topic": t, "msgId": "m", "count": 0},
             self.stub.Count, pb.CountRequest(topic=t, msg_id="m", count=0)),
            ("listMsg", {"topic": t, "status": 9},
             self.stub.List, pb.ListRequest(topic=t, status=9)),
            ("listMsg", {"topic": t, "limit": 0},
             self.stub.List, pb.ListRequest(topic=t, limit=0)),
            ("setTopicConfig", {"topic": t, "capacity": -1},
             self.stub.SetTopicConfig, pb.TopicConfig(topic=t, capacity=-1)),
            ("setTopicConfig", {"topic": t, "deadLetterTopic": t},
             self.stub.SetTopicConfig, pb.TopicConfig(topic=t, dead_letter_topic=t)),
            ("purgeTopic", {"topic": t, "status": 5},
             self.stub.Purge, pb.PurgeRequest(topic=t, status=5)),
            ("redriveMsg", {"topic": t, "limit": 0},
             self.stub.Redrive, pb.RedriveRequest(topic=t, limit=0)),
            ("ackMsg", {"topic": t, "msgId": "m", "ack": "false", "reason": "r" * 5000},
             self.stub.Ack, pb.AckRequest(topic=t, nack=["m"], reason="r" * 5000)),
        ]
        for op, params, method, request in cases:
            with self.subTest(op=op, params=str(params)[:80]):
                http_method = "GET" if op == "listMsg" else "POST"
                answer = self.server.http_call(http_method, "/camellia/delayQueue/" + op, params)
                self.assertEqual(answer["code"], 400, answer)
                code, text = self.error(method, request)
                self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
                self.assertEqual(text, answer["msg"])
        # ackMsgBatch without ids.
        answer = self.server.http_call("POST", "/camellia/delayQueue/ackMsgBatch",
                                       body={"topic": t})
        self.assertEqual(self.error(self.stub.Ack, pb.AckRequest(topic=t)),
                         (grpc.StatusCode.INVALID_ARGUMENT, answer["msg"]))

    def test_a_waiting_pull_past_its_deadline_takes_nothing(self):
        t = self.topic()
        start = time.monotonic()
        code, _ = self.error(lambda r, timeout: self.stub.Pull(r, timeout=0.3),
                             pb.PullRequest(topic=t, wait_millis=60000))
        self.assertEqual(code, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assertLess(time.monotonic() - start, 5)
        self.send(t, "a")
        pulled = self.stub.Pull(pb.PullRequest(topic=t), timeout=10)
        self.assertEqual([(m.msg_id, m.retry) for m in pulled.messages], [("a", 1)])

    def test_health_and_reflection(self):
        check = self.channel.unary_unary("/grpc.health.v1.Health/Check")
        self.assertEqual(check(b"", timeout=10), b"\x08\x01")  # status: SERVING
        # The node's online/offline switch (camellia's health endpoints) drives it.
        urllib.request.urlopen(self.server.http + "/camellia/health/offline", b"").close()
        self.assertEqual(check(b"", timeout=10), b"\x08\x02")  # NOT_SERVING
        urllib.request.urlopen(self.server.http + "/camellia/health/online", b"").close()
        self.assertEqual(check(b"", timeout=10), b"\x08\x01")
        reflect = self.channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
        # ServerReflectionRequest{list_services: "*"} (field 7).
        answers = list(reflect(iter([b"\x3a\x01*"]), timeout=10))
        self.assertIn(b"chronoq.v1.DelayQueue", answers[0])
        self.assertIn(b"grpc.health.v1.Health", answers[0])

    def test_health_check_and_watch(self):
        check = self.channel.unary_unary("/grpc.health.v1.Health/Check")
        # HealthCheckRequest{service: "chronoq.v1.DelayQueue"}: gRPC's default health service
        # knows "" only.
        name = b"chronoq.v1.DelayQueue"
        with self.assertRaises(grpc.RpcError) as cm:
            check(b"\x0a" + bytes([len(name)]) + name, timeout=10)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.NOT_FOUND)
        watch = self.channel.unary_stream("/grpc.health.v1.Health/Watch")
        unknown = watch(b"\x0a" + bytes([len(name)]) + name, timeout=10)
        self.assertEqual(next(unknown), b"\x08\x03")  # SERVICE_UNKNOWN, the stream open
        unknown.cancel()
        call = watch(b"", timeout=10)
        self.assertEqual(next(call), b"\x08\x01")  # SERVING at once
        urllib.request.urlopen(self.server.http + "/camellia/health/offline", b"").close()
        self.assertEqual(next(call), b"\x08\x02")  # then at each change
        urllib.request.urlopen(self.server.http + "/camellia/health/online", b"").close()
        self.assertEqual(next(call), b"\x08\x01")
        call.cancel()

    def test_reflection_answers_each_request_of_an_open_stream(self):
        # As grpcurl does: one stream, each request answered before the next is sent.
        requests = queue.Queue()
        info = self.channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            request_serializer=refl.ServerReflectionRequest.SerializeToString,
            response_deserializer=refl.ServerReflectionResponse.FromString)
        call = info(iter(requests.get, None), timeout=10)

        def ask(**kw):
            requests.put(refl.ServerReflectionRequest(host="h", **kw))
            return next(call)

        listed = ask(list_services="*")
        self.assertEqual(listed.valid_host, "h")
        self.assertEqual(listed.original_request.list_services, "*")
        names = [s.name for s in listed.list_services_response.service]
        self.assertIn("chronoq.v1.DelayQueue", names)
        self.assertIn("grpc.health.v1.Health", names)
        self.assertIn("grpc.reflection.v1alpha.ServerReflection", names)
        from google.protobuf import descriptor_pb2
        for answer in (ask(file_containing_symbol="chronoq.v1.DelayQueue"),
                       ask(file_containing_symbol="chronoq.v1.SendRequest.topic"),
                       ask(file_by_filename="chronoq/v1/delay_queue.proto")):
            files = answer.file_descriptor_response.file_descriptor_proto
            self.assertGreaterEqual(len(files), 1)
            f = descriptor_pb2.FileDescriptorProto.FromString(files[0])
            self.assertEqual(f.name, "chronoq/v1/delay_queue.proto")
            self.assertEqual(f.package, "chronoq.v1")
            methods = [m.name for m in f.service[0].method]
            self.assertIn("Send", methods)
            self.assertIn("Consume", methods)
            # Every file it imports comes with it.
            sent = {descriptor_pb2.FileDescriptorProto.FromString(b).name for b in files}
            self.assertTrue(set(f.dependency) <= sent, (f.dependency, sent))
        for missing in (ask(file_containing_symbol="chronoq.v1.NoSuchThing"),
                        ask(file_by_filename="no/such.proto")):
            self.assertEqual(missing.error_response.error_code,
                             grpc.StatusCode.NOT_FOUND.value[0])
        requests.put(None)  # the client's side ends: so does the call, OK
        self.assertEqual(list(call), [])
        self.assertEqual(call.code(), grpc.StatusCode.OK)

    # ---- Consume

    def open_stream(self, topic, credit, ack_timeout):
        requests = queue.Queue()
        requests.put(pb.ConsumeRequest(subscribe=pb.ConsumeRequest.Subscribe(
            topic=topic, credit=credit, ack_timeout_millis=ack_timeout)))

        def gen():
            while True:
                r = requests.get()
                if r is None:
                    return
                yield r

        call = self.stub.Consume(gen(), timeout=30)
        return requests, call

    def wait_parked(self, n, exactly=False):
        for _ in range(500):
            with urllib.request.urlopen(self.server.http + "/chronoq/test/longPolls") as r:
                parked = json.loads(r.read())["parked"]
            if parked == n or (not exactly and parked >= n):
                return
            time.sleep(0.01)
        self.fail(f"{parked} long polls parked, waited for {n}")

    def test_consume_credit_and_acks_on_the_stream(self):
        t = self.topic()
        requests, call = self.open_stream(t, 2, 30000)
        for i in "abc":
            self.send(t, i)
        self.assertEqual(next(call).message.msg_id, "a")
        self.assertEqual(next(call).message.msg_id, "b")
        # "c" only after an ack gives credit back: it follows the ack's answer on the stream.
        requests.put(pb.ConsumeRequest(ack=pb.AckRequest(ack=["a"])))
        r = next(call)
        self.assertEqual([(x.msg_id, x.code) for x in r.acked.results], [("a", 0)])
        self.assertEqual(next(call).message.msg_id, "c")
        self.assertEqual(self.stub.Get(pb.MessageRef(topic=t, msg_id="a"), timeout=10).status, 4)
        # A delayed message comes when it becomes consumable.
        requests.put(pb.ConsumeRequest(ack=pb.AckRequest(ack=["b"], nack=[])))
        self.assertTrue(next(call).HasField("acked"))
        self.send(t, "later", delay=2000)
        self.wait_parked(1)
        self.server.advance(2000)
        self.assertEqual(next(call).message.msg_id, "later")
        requests.put(None)
        call.cancel()

    def test_a_broken_stream_gives_its_messages_back_after_the_ack_timeout(self):
        t = self.topic()
        requests, call = self.open_stream(t, 5, 5000)
        self.send(t, "a")
        self.assertEqual(next(call).message.msg_id, "a")
        call.cancel()  # the client goes away without acking
        requests.put(None)
        # Its parked poll gone (else the second stream's wait below may count it, and the
        # message, ready again, may go to the broken stream if the server hears of the break late).
        self.wait_parked(0, exactly=True)
        requests2, call2 = self.open_stream(t, 5, 5000)
        self.wait_parked(1)
        self.server.advance(4999)
        self.assertEqual(self.stub.Get(pb.MessageRef(topic=t, msg_id="a"), timeout=10).status, 3)
        self.server.advance(1)
        again = next(call2).message
        self.assertEqual((again.msg_id, again.retry), ("a", 2))
        requests2.put(pb.ConsumeRequest(ack=pb.AckRequest(ack=["a"])))
        self.assertEqual(next(call2).acked.results[0].code, 0)
        requests2.put(None)
        call2.cancel()

    def test_a_request_larger_than_the_stream_window_is_read_whole(self):
        """An ack of 2 MB, beyond HTTP/2's stream window (1 MiB on our own server): read whole
        and judged by the service, whose sentence ends the stream."""
        t = self.topic()
        requests, call = self.open_stream(t, 1, 30000)
        self.send(t, "a")
        self.assertEqual(next(call).message.msg_id, "a")
        ids = ["a"] + ["x%09d" % i for i in range(200000)]
        requests.put(pb.ConsumeRequest(ack=pb.AckRequest(ack=ids)))
        with self.assertRaises(grpc.RpcError) as cm:
            next(call)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertTrue(cm.exception.details().startswith("ack and nack hold 200001 msgIds"),
                        cm.exception.details())
        requests.put(None)

    def test_a_bad_subscription_ends_the_stream_with_the_sentence(self):
        requests, call = self.open_stream("", 1, 1000)
        with self.assertRaises(grpc.RpcError) as cm:
            next(call)
        self.assertEqual((cm.exception.code(), cm.exception.details()),
                         (grpc.StatusCode.INVALID_ARGUMENT, "topic is empty"))
        requests.put(None)


class ShutdownTest(unittest.TestCase):
    def test_sigterm_ends_streams_cleanly(self):
        work = tempfile.mkdtemp(prefix="chronoq-grpc-")
        server = Server(work)
        try:
            channel = grpc.insecure_channel(server.grpc)
            stub = pbg.DelayQueueStub(channel)
            requests = queue.Queue()
            requests.put(pb.ConsumeRequest(subscribe=pb.ConsumeRequest.Subscribe(topic="t",
                                                                                 credit=1)))
            call = stub.Consume(iter(requests.get, None), timeout=30)
            for _ in range(500):
                with urllib.request.urlopen(server.http + "/chronoq/test/longPolls") as r:
                    if json.loads(r.read())["parked"] == 1:
                        break
                time.sleep(0.01)
            self.assertEqual(server.stop(signal.SIGTERM), 0)
            self.assertIsNone(server.sanitizer_report())
            self.assertEqual(list(call), [])  # the stream ended without an error
            self.assertEqual(call.code(), grpc.StatusCode.OK)
            requests.put(None)
            channel.close()
        finally:
            server.stop()
            shutil.rmtree(work, ignore_errors=True)

    def test_health_watch_says_not_serving_at_sigterm(self):
        # A load balancer watching the health service sees the node go before its streams end.
        work = tempfile.mkdtemp(prefix="chronoq-grpc-")
        server = Server(work)
        try:
            channel = grpc.insecure_channel(server.grpc)
            call = channel.unary_stream("/grpc.health.v1.Health/Watch")(b"", timeout=30)
            self.assertEqual(next(call), b"\x08\x01")  # SERVING
            server.proc.send_signal(signal.SIGTERM)
            self.assertEqual(next(call), b"\x08\x02")  # NOT_SERVING
            self.assertEqual(server.stop(), 0)
            channel.close()
        finally:
            server.stop()
            shutil.rmtree(work, ignore_errors=True)


def main():
    global ARGS, pb, pbg, refl
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--proto-dir", required=True)
    parser.add_argument("--storage", default="memory")
    # The engine under test (docs/grpc.md); CMake runs the file on each. The server's default.
    parser.add_argument("--grpc-engine", default="h2")
    # Tests left out (what an engine does not serve yet), by method name.
    parser.add_argument("--skip", action="append", default=[])
    ARGS, rest = parser.parse_known_args()
    for name in ARGS.skip:
        for cls in (GrpcApiTest, ShutdownTest):
            if hasattr(cls, name):
                delattr(cls, name)
    stubs = tempfile.mkdtemp(prefix="chronoq-stubs-")
    try:
        generate_stubs(ARGS.proto_dir, stubs)
        sys.path.insert(0, stubs)
        from chronoq.v1 import delay_queue_pb2, delay_queue_pb2_grpc
        from chronoq.reflection.v1alpha import reflection_pb2
        pb, pbg, refl = delay_queue_pb2, delay_queue_pb2_grpc, reflection_pb2
        result = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2).result
    finally:
        shutil.rmtree(stubs, ignore_errors=True)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
