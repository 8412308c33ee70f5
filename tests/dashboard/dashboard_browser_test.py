#!/usr/bin/env python3
"""The dashboard in a real browser: headless Chromium (Debian's chromium and chromium-driver,
driven by python3-selenium) against a real `chronoq serve` of the build under test.

What a user does, checked on the screen:
- the overview loads; a message sent through the API appears in the topic list;
- its topic and then the message open; "Trigger now" makes it READY (and the API agrees);
- topics, msgIds and payloads holding <script>, quotes and broken HTML show as text, and no
  script of theirs runs;
- the topic configuration form sets a dead-letter topic and maxRetry 0; a nacked message becomes
  a dead letter, listed in the dead-letter views, and "Redrive" sends it back (the API agrees);
- the node can be set offline and online again;
- with tokens (a second server): a namespace's admin sees and acts on its own topics only, under
  their client names, without the node toggle; the admin of '*' sees every namespace's topics as
  ns/topic, shown but not opened;
- the browser logged no error (console or network) on the way.

Every wait is an explicit wait on an element or an answer, never a fixed sleep.
Usage: dashboard_browser_test.py --binary build/chronoq [--screenshots docs/images] [--demo]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

WAIT = 12  # seconds: the longest wait is the history's next sample (every 5 s)
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "WARNING: ThreadSanitizer", "runtime error:")

XSS_TOPIC = "<script>window.__xss='topic'</script>\"'&amp;"
XSS_ID = "\"><img src=x onerror=\"window.__xss='id'\">"
XSS_PAYLOAD = "<script>window.__xss='msg'</script></div><b>\"unclosed '<!--"
XSS_JSON = json.dumps({"html": "<script>window.__xss='json'</script>", "q": "\"quoted\" </pre>"})


# Tokens of the scoped pass (16+ characters of [A-Za-z0-9._~-]).
SHOP_ADMIN = "shopA-0123456789abcdef"
BANK_ADMIN = "bankA-0123456789abcdef"
ROOT_ADMIN = "rootA-0123456789abcdef"


class Server:
    def __init__(self, binary, tokens=None):
        self.work = tempfile.mkdtemp(prefix="chronoq-dashboard-")
        self.log = open(os.path.join(self.work, "server.log"), "w")
        self.token = None  # sent by call() and get() when set
        flags = []
        if tokens:
            path = os.path.join(self.work, "tokens")
            with open(path, "w") as f:
                f.write(tokens)
            flags.append("--auth-tokens-file=" + path)
        self.proc = subprocess.Popen(
            [binary, "serve", "--listen=127.0.0.1:0",
             "--data-dir=" + os.path.join(self.work, "data"), "--log-level=warn",
             "--grpc-listen="] + flags,
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        m = re.match(r"chronoq listening on 127\.0\.0\.1:(\d+)$", line.strip())
        if not m:
            self.stop()
            sys.exit(f"the server did not start: {line!r}")
        self.base = f"http://127.0.0.1:{m.group(1)}"

    def call(self, op, **params):
        """A queue operation (POST form), as any client sends it; the JSON answer."""
        data = urllib.parse.urlencode(params).encode()
        url = self.base + "/camellia/delayQueue/" + op
        with urllib.request.urlopen(self.request(url, data), timeout=10) as r:
            return json.loads(r.read())

    def request(self, url, data=None):
        req = urllib.request.Request(url, data=data)
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        return req

    def get(self, op, **params):
        """A GET operation (getTopicConfig, getTopicInfo); the JSON answer."""
        url = self.base + "/camellia/delayQueue/" + op + "?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(self.request(url), timeout=10) as r:
            return json.loads(r.read())

    def health(self, what):
        try:
            with urllib.request.urlopen(self.base + "/camellia/health/" + what, timeout=10) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        logs = open(os.path.join(self.work, "server.log")).read()
        shutil.rmtree(self.work, ignore_errors=True)
        return logs


def browser(tmp):
    """Chromium through chromedriver, their temporary files (profile, singleton socket) in `tmp`:
    Chromium leaves its org.chromium.Chromium.* directory behind even after quit()."""
    opts = webdriver.ChromeOptions()
    opts.binary_location = "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1440,1000", "--force-device-scale-factor=1", "--lang=en-US",
              "--no-first-run", "--disable-extensions", "--disable-background-networking"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The Debian driver, named explicitly: Selenium never looks for (or downloads) another.
    env = dict(os.environ, TMPDIR=tmp)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver", env=env), options=opts)


def route(*parts):
    return "#/" + "/".join(urllib.parse.quote(p, safe="") for p in parts)


class Test:
    def __init__(self, server, driver, shots):
        self.s = server
        self.d = driver
        self.shots = shots
        # The views re-render as they refresh (every second here): an element found a moment ago
        # may be gone, and the wait then looks again.
        self.wait = WebDriverWait(driver, WAIT, ignored_exceptions=(StaleElementReferenceException,))
        self.console = []

    def q(self, css, within=None):
        return (within or self.d).find_elements(By.CSS_SELECTOR, css)

    def until(self, what, fn):
        try:
            return self.wait.until(lambda d: fn())
        except TimeoutException:
            raise AssertionError(f"timed out waiting for {what}; page text:\n" +
                                 self.d.find_element(By.TAG_NAME, "main").text[:2000])

    def testid(self, name):
        return self.until(f"[data-testid={name}]",
                          lambda: next(iter(self.q(f"[data-testid='{name}']")), None))

    def text_of(self, name, want):
        return self.until(f"{name} showing {want!r}",
                          lambda: any(e.text == want for e in self.q(f"[data-testid='{name}']")))

    def row(self, testid, attr, value):
        def find():
            for e in self.q(f"[data-testid='{testid}']"):
                if e.get_attribute(attr) == value:
                    return e
            return None
        return self.until(f"a {testid} with {attr}={value!r}", find)

    def click(self, what, find):
        """Clicks what `find` returns, finding it again if it was re-rendered meanwhile."""
        def attempt():
            e = find()
            if e is None:
                return False
            e.click()
            return True
        self.until(f"a click on {what}", attempt)

    def click_testid(self, name, within=None):
        self.click(name, lambda: next(iter(self.q(f"[data-testid='{name}']", within)), None))

    def confirm(self):
        self.click_testid("confirm-ok")
        self.until("the dialog to close", lambda: not self.q("dialog[open]"))

    def open(self, fragment):
        self.d.get(self.s.base + "/dashboard?refresh=1" + fragment)

    def shot(self, name):
        if self.shots:
            # Without the toasts of earlier actions and the focus ring of the last click.
            self.d.execute_script("document.getElementById('toasts').replaceChildren();"
                                  "document.activeElement && document.activeElement.blur();")
            self.d.save_screenshot(os.path.join(self.shots, name + ".png"))

    def drain_console(self):
        for entry in self.d.get_log("browser"):
            if entry["level"] in ("SEVERE", "ERROR"):
                self.console.append(entry["message"])

    def no_script_ran(self):
        assert self.d.execute_script("return window.__xss === undefined"), \
            "a value from the server ran as a script: " + str(self.d.execute_script("return window.__xss"))
        assert not self.q("main img, main script"), "a value from the server became markup"

    # --- The scenarios.
    def overview_then_trigger_now(self):
        self.open("#/")
        self.testid("overview")
        self.testid("stat-topics")
        sent = self.s.call("sendMsg", topic="orders", msgId="order-1",
                           msg='{"orderId":1,"items":[{"sku":"A-7","qty":2}]}',
                           delayMillis=3_600_000)
        assert sent["code"] == 200, sent
        self.row("topic-row", "data-topic", "orders")
        self.shot("overview")
        self.click("the orders link", lambda: self.row("topic-row", "data-topic", "orders")
                   .find_element(By.CSS_SELECTOR, "a.topic-link"))
        self.testid("topic-view")
        self.text_of("topic-name", "orders")
        self.text_of("count-waiting", "Waiting\n1")
        self.row("msg-row", "data-msg-id", "order-1")
        self.shot("topic")
        self.click("order-1", lambda: self.row("msg-row", "data-msg-id", "order-1")
                   .find_element(By.CSS_SELECTOR, "[data-testid='msg-link']"))
        self.testid("message-view")
        self.text_of("msg-status", "WAITING")
        self.shot("message")
        self.click_testid("trigger-now")
        self.text_of("msg-status", "READY")
        got = self.s.call("getMsg", topic="orders", msgId="order-1")
        assert got["delayMsg"]["status"] == 2, got

    def hostile_values_show_as_text(self):
        for msg_id, payload in ((XSS_ID, XSS_PAYLOAD), ("json", XSS_JSON)):
            sent = self.s.call("sendMsg", topic=XSS_TOPIC, msgId=msg_id, msg=payload,
                               delayMillis=60_000)
            assert sent["code"] == 200, sent
        self.open("#/")
        row = self.row("topic-row", "data-topic", XSS_TOPIC)
        assert row.find_element(By.CSS_SELECTOR, "a.topic-link").text == XSS_TOPIC
        self.no_script_ran()
        self.open(route("topic", XSS_TOPIC))
        self.text_of("topic-name", XSS_TOPIC)
        self.row("msg-row", "data-msg-id", XSS_ID)
        self.no_script_ran()
        self.open(route("topic", XSS_TOPIC, "msg", XSS_ID))
        self.text_of("msg-id", XSS_ID)
        self.text_of("msg-payload", XSS_PAYLOAD)
        self.text_of("msg-topic", XSS_TOPIC)
        self.no_script_ran()
        self.open(route("topic", XSS_TOPIC, "msg", "json"))
        self.text_of("msg-payload", json.dumps(json.loads(XSS_JSON), indent=2))
        self.no_script_ran()

    def dead_letter_and_redrive(self):
        self.open(route("topic", "jobs"))
        self.testid("topic-view")
        self.click_testid("edit-config")
        form = self.testid("config-form")
        for name, value in (("maxRetry", "0"), ("deadLetterTopic", "jobs-dlq")):
            box = form.find_element(By.NAME, name)
            box.clear()
            box.send_keys(value)
        self.click_testid("save-config")
        self.text_of("cfg-deadLetterTopic", "jobs-dlq")
        self.text_of("cfg-maxRetry", "0")
        cfg = self.s.get("getTopicConfig", topic="jobs")["topicConfig"]
        assert cfg["deadLetterTopic"] == "jobs-dlq" and cfg["maxRetry"] == 0, cfg
        # A delivery nacked on its only try: a dead letter in jobs-dlq.
        assert self.s.call("sendMsg", topic="jobs", msgId="job-1", msg="resize 42",
                           delayMillis=0)["code"] == 200
        pulled = self.s.call("pullMsg", topic="jobs", batch=1)["delayMsgList"]
        assert [m["msgId"] for m in pulled] == ["job-1"], pulled
        assert self.s.call("ackMsg", topic="jobs", msgId="job-1", ack="false",
                           reason="image too large")["code"] == 200
        # Listed once the history has sampled the dead-letter counter (every 5 s).
        self.testid("dlq-link")
        self.open("#/deadletters")
        self.testid("deadletters-view")
        self.until("the jobs row", lambda: any("jobs-dlq" in e.text for e in self.q("[data-testid='dl-row']")))
        self.click("jobs-dlq", lambda: next(
            (e for e in self.q("[data-testid='dlq-open']") if e.text == "jobs-dlq"), None))
        self.testid("dlq-view")
        row = self.row("msg-row", "data-msg-id", "job-1")
        assert "image too large" in row.text, row.text
        self.shot("dlq")
        self.click("redrive job-1", lambda: self.row("msg-row", "data-msg-id", "job-1")
                   .find_element(By.CSS_SELECTOR, "[data-testid='redrive-one']"))
        self.confirm()
        self.testid("browser-empty")
        back = self.s.call("getMsg", topic="jobs", msgId="job-1")["delayMsg"]
        assert back["status"] == 2 and back["retry"] == 0, back
        assert self.s.get("getTopicInfo", topic="jobs-dlq")["data"]["readyQueueSize"] == 0

    def other_actions(self):
        """Pause and resume, edit and reschedule, delete, redrive all, search and paging, token."""
        for i in range(30):
            assert self.s.call("sendMsg", topic=f"page-{i:02d}", msg="x",
                               delayMillis=60_000)["code"] == 200
        self.open("#/")
        self.row("topic-row", "data-topic", "jobs")
        search = self.testid("topic-search")
        search.send_keys("page-1")
        self.until("the search's 10 rows", lambda: len(self.q("[data-testid='topic-row']")) == 10)
        search.clear()
        search.send_keys("page-")
        self.text_of("topic-range", "1–25 of 30")
        self.click("Next", lambda: self.d.find_element(By.XPATH, "//button[text()='Next →']"))
        self.text_of("topic-range", "26–30 of 30")

        self.open(route("topic", "jobs"))
        self.click_testid("pause")
        self.testid("paused")
        assert self.s.get("getTopicConfig", topic="jobs")["topicConfig"]["paused"] is True
        self.click_testid("resume")
        self.testid("pause")
        assert self.s.get("getTopicConfig", topic="jobs")["topicConfig"]["paused"] is False

        # Message history: shown for a topic that records it, hidden for one that does not.
        assert self.s.call("setTopicConfig", topic="hist", history="true")["code"] == 200
        assert self.s.call("sendMsg", topic="hist", msgId="h1", msg="x", delayMillis=0)["code"] == 200
        assert self.s.call("pullMsg", topic="hist", batch=1)["code"] == 200
        self.open(route("topic", "hist", "msg", "h1"))
        self.until("the history with its delivery", lambda: any(
            e.is_displayed() and "sent" in e.text and "delivered" in e.text
            for e in self.q("[data-testid='msg-history']")))

        self.open(route("topic", "jobs", "msg", "job-1"))
        self.text_of("msg-status", "READY")
        assert not any(e.is_displayed() for e in self.q("[data-testid='msg-history']")), \
            "jobs records no history"
        box = self.testid("edit-payload")
        box.clear()
        box.send_keys('{"edited":true}')
        prio = self.testid("edit-priority")
        prio.clear()
        prio.send_keys("7")
        self.click_testid("save-msg")
        self.until("the saved payload", lambda: self.s.call("getMsg", topic="jobs", msgId="job-1")
                   ["delayMsg"].get("priority") == 7)
        self.text_of("msg-payload", '{\n  "edited": true\n}')
        # Reschedule one hour ahead: waiting again.
        later = self.d.execute_script(
            "const d = new Date(Date.now() + 3600e3 - new Date().getTimezoneOffset() * 60e3);"
            "return d.toISOString().slice(0, 19);")
        at = self.testid("reschedule-at")
        self.d.execute_script("arguments[0].value = arguments[1]", at, later)
        self.click("Reschedule", lambda: self.d.find_element(By.XPATH, "//button[text()='Reschedule']"))
        self.text_of("msg-status", "WAITING")
        self.click_testid("delete-msg")
        self.confirm()
        self.text_of("msg-status", "DELETE")
        assert self.s.call("getMsg", topic="jobs", msgId="job-1")["delayMsg"]["status"] == 7

        # Two dead letters, both redriven at once.
        for i in (2, 3):
            self.s.call("sendMsg", topic="jobs", msgId=f"job-{i}", msg="m", delayMillis=0)
            self.s.call("pullMsg", topic="jobs", batch=1)
            self.s.call("ackMsg", topic="jobs", msgId=f"job-{i}", ack="false")
        self.open(route("dlq", "jobs-dlq"))
        self.row("msg-row", "data-msg-id", "job-3")
        self.click_testid("redrive-all")
        self.confirm()
        self.testid("browser-empty")
        assert self.s.get("getTopicInfo", topic="jobs")["data"]["readyQueueSize"] == 2

        # A token is kept for the tab and sent on every call.
        self.click_testid("token-button")
        self.testid("token-dialog").find_element(By.ID, "token-input").send_keys("s3cret")
        self.click("Use token", lambda: self.d.find_element(By.XPATH, "//button[text()='Use token']"))
        self.until("the token kept", lambda: self.d.execute_script(
            "return sessionStorage.getItem('chronoq.token')") == "s3cret")
        self.text_of("token-button", "Token ✓")
        self.click_testid("token-button")
        self.click("Forget token", lambda: self.d.find_element(By.XPATH, "//button[text()='Forget token']"))
        self.text_of("token-button", "Token")

    def node_offline_and_online(self):
        self.open("#/")
        self.text_of("node-state", "Node online")
        self.click_testid("node-toggle")
        self.confirm()
        self.text_of("node-state", "Node offline")
        assert self.s.health("status") == 500
        self.click_testid("node-toggle")
        self.text_of("node-state", "Node online")
        assert self.s.health("status") == 200


def scoped_tokens(binary, driver):
    """A server with tokens: each admin's dashboard, through the token kept in the tab."""
    server = Server(binary, f"{SHOP_ADMIN} shop admin\n{BANK_ADMIN} bank admin\n"
                            f"{ROOT_ADMIN} * admin\n")
    test = Test(server, driver, None)
    try:
        for token, topic in ((SHOP_ADMIN, "orders"), (BANK_ADMIN, "ledger"), (BANK_ADMIN, "orders")):
            server.token = token
            assert server.call("sendMsg", topic=topic, msgId="m-1", msg="x",
                               delayMillis=60_000)["code"] == 200

        def use(token):
            # In the tab's storage before the page's scripts run: no call goes out without it
            # (no 401 logged), as after a user entered it.
            driver.get("about:blank")  # then a new document of the dashboard, not a new fragment
            script = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {
                "source": f"sessionStorage.setItem('chronoq.token', {json.dumps(token)})"})
            test.open("#/")
            test.testid("overview")
            driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument",
                                   {"identifier": script["identifier"]})

        def listed():
            return sorted(e.get_attribute("data-topic") for e in test.q("[data-testid='topic-row']"))

        use(SHOP_ADMIN)
        test.text_of("namespace", "Namespace shop")
        test.row("topic-row", "data-topic", "orders")
        test.text_of("stat-topics", "Topics\n1")
        assert listed() == ["orders"], listed()
        page = driver.find_element(By.TAG_NAME, "body").text
        assert "bank" not in page and "ledger" not in page, page
        assert not test.q("[data-testid='node-toggle']"), "a namespace's admin cannot set the node"
        assert not test.q("[data-testid='chart-rates']"), "the node's charts span every namespace"
        # An action on its topic reaches shop's orders, not bank's.
        test.click("the orders link", lambda: test.row("topic-row", "data-topic", "orders")
                   .find_element(By.CSS_SELECTOR, "a.topic-link"))
        test.text_of("topic-name", "orders")
        test.row("msg-row", "data-msg-id", "m-1")
        test.click_testid("pause")
        test.testid("paused")
        server.token = SHOP_ADMIN
        assert server.get("getTopicConfig", topic="orders")["topicConfig"]["paused"] is True
        server.token = BANK_ADMIN
        assert server.get("getTopicConfig", topic="orders")["topicConfig"]["paused"] is False
        test.drain_console()

        use(ROOT_ADMIN)
        test.testid("node-toggle")
        test.row("topic-row", "data-topic", "shop/orders")
        test.until("both namespaces' topics",
                   lambda: listed() == ["bank/ledger", "bank/orders", "shop/orders"])
        # Another namespace's topic is shown, not a link (this token addresses '*' only).
        row = test.row("topic-row", "data-topic", "bank/ledger")
        assert not row.find_elements(By.CSS_SELECTOR, "a"), row.get_attribute("outerHTML")
        test.testid("chart-rates")
        test.drain_console()
        driver.execute_script("sessionStorage.removeItem('chronoq.token')")
        return test.console
    finally:
        logs = server.stop()
        for marker in SANITIZER_MARKERS:
            if marker in logs:
                raise AssertionError("the server with tokens wrote a sanitizer report:\n" + logs)


def demo_shots(test):
    """With --demo: the views over a busy topic, for docs/dashboard.md."""
    test.open(route("topic", "payments"))
    test.testid("topic-view")
    test.until("the topic's charts", lambda: test.q("figure.chart-card svg.chart"))
    test.until("the topic's messages", lambda: test.q("[data-testid='msg-row']"))
    test.shot("topic")
    test.open("#/deadletters")
    test.until("the dead-letter rows", lambda: len(test.q("[data-testid='dl-row']")) >= 4)
    test.shot("deadletters")
    test.open(route("dlq", "payments-dlq"))
    test.row("msg-row", "data-msg-id", "payments-0-0")
    test.shot("dlq")


def demo_traffic(server, seconds):
    """A minute of varied traffic, so that the screenshots show charts with something in them."""
    end = time.time() + seconds
    i = 0
    for t in ("payments", "emails", "reports", "thumbnails"):
        server.call("setTopicConfig", topic=t, deadLetterTopic=t + "-dlq", maxRetry=0)
    while time.time() < end:
        for k, t in enumerate(("payments", "emails", "reports", "thumbnails", "invoices")):
            for j in range(1 + (i + k) % 4):
                server.call("sendMsg", topic=t, msgId=f"{t}-{i}-{j}", delayMillis=(j * 97_000) % 7_200_000,
                            msg=json.dumps({"id": i, "n": j, "topic": t}))
            got = server.call("pullMsg", topic=t, batch=3)["delayMsgList"]
            for m in got:
                server.call("ackMsg", topic=t, msgId=m["msgId"], ack="true" if (i + k) % 5 else "false",
                            reason="upstream timeout")
        i += 1
        time.sleep(0.5)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--screenshots", help="save a PNG of each view into this folder")
    ap.add_argument("--demo", type=int, default=0, help="seconds of traffic before the run")
    args = ap.parse_args()
    if args.screenshots:
        os.makedirs(args.screenshots, exist_ok=True)
    started = time.time()
    server = Server(args.binary)
    driver = None
    browser_tmp = tempfile.mkdtemp(prefix="chronoq-chromium-")
    failed = None
    try:
        if args.demo:
            demo_traffic(server, args.demo)
        driver = browser(browser_tmp)
        test = Test(server, driver, args.screenshots)
        for scenario in (test.overview_then_trigger_now, test.hostile_values_show_as_text,
                         test.dead_letter_and_redrive, test.other_actions,
                         test.node_offline_and_online):
            scenario()
            test.drain_console()
            print(f"ok   {scenario.__name__} ({time.time() - started:.1f} s)")
        if not args.demo:
            test.console += scoped_tokens(args.binary, driver)
            print(f"ok   scoped_tokens ({time.time() - started:.1f} s)")
        if args.demo and args.screenshots:
            demo_shots(test)
            test.drain_console()
        if test.console:
            failed = "the browser logged errors:\n  " + "\n  ".join(test.console)
    except AssertionError as e:
        failed = str(e)
    finally:
        if driver is not None:
            driver.quit()
        shutil.rmtree(browser_tmp, ignore_errors=True)
        logs = server.stop()
    for marker in SANITIZER_MARKERS:
        if marker in logs:
            failed = (failed or "") + "\nthe server wrote a sanitizer report:\n" + logs
    if failed:
        print("FAIL " + failed)
        return 1
    print(f"dashboard browser test passed in {time.time() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
