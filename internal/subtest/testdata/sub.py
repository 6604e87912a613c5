#!/usr/bin/env python3
"""A scripted AAEP subscriber over SSE, standard library only.

Usage: sub.py URL [MODE]

It subscribes with POST /aaep/v1/subscriptions, reads the stream at the
Location it is given, and plays the scripted user of the scenario from
AAEP_TEST_DECISIONS: each prompt is answered after its delay if it is still
offered (a withdrawn prompt, or one whose session ended, is dropped).

MODE makes it misbehave in one way, so that each expectation of a scenario
can be seen to fail:
  good        (default) behaves
  nosubid     replies without subscription_id (as the React and CLI ones do)
  flip        answers accept where the user rejected, and the reverse
  mangle      echoes the reply_token in upper case
  auto        answers every confirmation at once with accept (an auto-response)
  stale       keeps withdrawn prompts, so a late answer becomes a reply
  silent      never replies
  twice       answers a prompt again when it is delivered again
  double      sends each reply twice
  leave       disconnects after the first event of an unknown type
  noresume    after a cut, reconnects without Last-Event-ID
  noreturn    after a cut, never comes back (a pending answer is still sent)
  nohandshake opens the stream without a subscription.request
  noclose     quits at the user's shutdown without subscription.close
  noorder     takes events in arrival order, ignoring sequence_number
  aaeponly    keeps the default event_filters (aaep:agent.* only)
  refuselow   closes its subscription when honoured a lower rate than it asked
  shed        under backpressure drops what comes within 0.5 s of the last event,
              critical events too
  unnamed     hears only unnamed events, as EventSource's onmessage does
  nodeclare   claims level 2 without declaring supports_confirmation_reply
  badchoice   answers a clarification with a value that is not a choice
  exit        exits before subscribing
"""

import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request

BASE = sys.argv[1].rstrip("/")
MODE = sys.argv[2] if len(sys.argv) > 2 else "good"
SCENARIO = os.environ.get("AAEP_TEST_SCENARIO", "")
ACTIONS = json.loads(os.environ.get("AAEP_TEST_DECISIONS", "[]"))
DECISIONS = {d["token"]: d for d in ACTIONS if d.get("action", "reply") == "reply"}
AFTER = {d["after"]: d for d in ACTIONS if d.get("action", "reply") != "reply"}

KNOWN = {
    "session.started", "session.completed", "session.errored", "session.cancelled",
    "state.changed", "progress.updated", "tool.invoked", "tool.completed",
    "output.streaming", "awaiting.confirmation", "awaiting.clarification", "handoff.requested",
}

lock = threading.Lock()
pending = {}  # reply_token -> (kind, session)
answered = set()  # reply_tokens answered
withdrawn = {}  # session -> sequence_number of its last withdrawal (a prompt before it is stale)
last_event = [0.0]  # when the last event came (shed)
ASKED_RATE = 10
honored_rate = [None]  # the max_events_per_second the producer honoured
subscription_id = None


def post(path, msg):
    req = urllib.request.Request(BASE + path, data=json.dumps(msg).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z"


def answer(token, kind, d):
    with lock:
        if token not in pending and MODE != "twice":
            return  # withdrawn or ended: the user's late click reaches nothing
        pending.pop(token, None)
        answered.add(token)
    echoed = token.upper() if MODE == "mangle" else token
    if kind == "confirmation":
        decision = d.get("decision", "accept")
        if MODE == "flip":
            decision = "reject" if decision == "accept" else "accept"
        msg = {"type": "confirmation.reply", "reply_token": echoed, "decision": decision}
    else:
        response = "bathtub" if MODE == "badchoice" else d.get("response")
        msg = {"type": "clarification.reply", "reply_token": echoed, "response": response}
    if MODE != "nosubid" and subscription_id is not None:
        msg["subscription_id"] = subscription_id  # without a handshake it has none to send
    msg["timestamp"] = now()
    post("/aaep/v1/replies", msg)
    if MODE == "double":
        post("/aaep/v1/replies", msg)


def on_event(ev):
    typ = ev.get("type", "")
    short = typ.removeprefix("aaep:agent.")
    sess = ev.get("session_id")
    seq = ev.get("sequence_number")
    if MODE == "refuselow" and honored_rate[0] is not None and honored_rate[0] < ASKED_RATE:
        post("/aaep/v1/replies", {"type": "subscription.close", "subscription_id": subscription_id,
                                  "reason_code": "capabilities_refused", "reason_message": "Not the rate I asked for."})
        os._exit(0)
    now_s = time.monotonic()
    if MODE == "shed" and now_s - last_event[0] < 0.5:
        last_event[0] = now_s
        return  # dropped under backpressure, whatever its urgency
    last_event[0] = now_s
    if short in ("awaiting.confirmation", "awaiting.clarification"):
        token = ev["reply_token"]
        kind = short.split(".")[1]
        if MODE != "noorder" and isinstance(seq, int) and seq < withdrawn.get(sess, -1):
            return  # it arrived after the later event that withdrew it
        with lock:
            if MODE != "twice" and token in answered:
                return  # a redelivered prompt (same event_id) is shown once
            pending[token] = (kind, sess)
        if MODE == "auto" and kind == "confirmation":
            answer(token, kind, {"decision": "accept"})
            return
        d = DECISIONS.get(token)
        if d is not None and MODE != "silent":
            delay = d.get("delay_ns", 0) / 1e9
            threading.Timer(delay, answer, (token, kind, d)).start()
    elif MODE != "stale" and (
            (short == "state.changed" and ev.get("from_state") == "awaiting_input")
            or short in ("session.completed", "session.errored", "session.cancelled")):
        if isinstance(seq, int):
            withdrawn[sess] = max(seq, withdrawn.get(sess, -1))
        with lock:
            for token, (_, s) in list(pending.items()):
                if s == sess:
                    del pending[token]
    if MODE == "leave" and short not in KNOWN:
        os._exit(0)
    act = AFTER.pop(ev.get("event_id"), None)
    if act is not None:
        threading.Timer(act.get("delay_ns", 0) / 1e9, user_acts, (act,)).start()


def user_acts(act):
    """The scripted user's action after an event (AAEP_TEST_DECISIONS)."""
    if act["action"] == "renegotiate" and MODE == "good":
        caps = dict(act["capabilities"], supports_confirmation_reply=True)
        post("/aaep/v1/replies", {"type": "subscription.renegotiate", "subscription_id": subscription_id,
                                  "capabilities": caps})
    elif act["action"] == "shutdown":
        if MODE != "noclose" and subscription_id is not None:
            post("/aaep/v1/replies", {"type": "subscription.close", "subscription_id": subscription_id,
                                      "reason_code": "subscriber_shutdown", "reason_message": "The user quit."})
        os._exit(0)


def subscribe():
    global subscription_id
    if MODE == "nohandshake":
        return "/aaep/v1/events"
    request = {"type": "subscription.request", "aaep_version": "1.0.0", "subscriber_id": "sub-py",
               "capabilities": {"supports_confirmation_reply": True, "supports_clarification_reply": True,
                                "supported_conformance_levels": [1, 2, 3], "max_events_per_second": ASKED_RATE,
                                "event_filters": {"include": ["*"]}}}
    if MODE == "aaeponly":
        del request["capabilities"]["event_filters"]
    if MODE == "nodeclare":
        del request["capabilities"]["supports_confirmation_reply"]
    status, headers, body = post("/aaep/v1/subscriptions", request)
    if status != 201:
        print("subscription refused:", status, body.decode(), file=sys.stderr)
        sys.exit(0)
    accepted = json.loads(body)
    subscription_id = accepted["subscription_id"]
    honored_rate[0] = accepted.get("honored_capabilities", {}).get("max_events_per_second")
    return headers["Location"]


def stream(path, last_id):
    req = urllib.request.Request(BASE + path, headers={"Accept": "text/event-stream"})
    if last_id and MODE != "noresume":
        req.add_header("Last-Event-ID", last_id)
    with urllib.request.urlopen(req, timeout=120) as resp:
        if resp.status == 204:
            return last_id, True
        data = []
        name = ""
        for raw in resp:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line.startswith("id:"):
                last_id = line[3:].strip()
            elif line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
            elif line == "" and data:
                try:
                    ev = json.loads("\n".join(data))
                except ValueError:
                    ev = None  # a malformed event is skipped, not fatal
                data = []
                heard = MODE != "unnamed" or name in ("", "message")
                name = ""
                if isinstance(ev, dict) and heard:
                    on_event(ev)
            elif line == "":
                name = ""
    return last_id, False


def main():
    if MODE == "exit":
        sys.exit(3)
    path = subscribe()
    last_id = None
    for _ in range(5):
        try:
            last_id, over = stream(path, last_id)
            if over or MODE == "noreturn":
                break
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)  # the stream ended: come back, as an EventSource would


main()
