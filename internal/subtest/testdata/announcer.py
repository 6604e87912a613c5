#!/usr/bin/env python3
"""A native AAEP subscriber that reports what it tells its user, standard
library only: it reads the SSE stream (no handshake: Level 1) and writes one
JSON line per announcement, {"text", "urgency", "modality"}, to the
descriptor named in AAEP_TEST_ANNOUNCEMENTS_FD (aaep-replay test
--announcements).

Usage: announcer.py URL [MODE]

MODE makes it misbehave in one way:
  good      (default) announces the start, tool calls, the three ends told
            apart, unknown types generically; critical events assertively
  polite    announces critical events politely
  suppress  never announces a critical event
  summary   reads each summary as it is, never saying how a session ended
  silent    announces nothing
  garbage   also writes lines that are not announcements
"""

import json
import os
import sys
import urllib.request

BASE = sys.argv[1].rstrip("/")
MODE = sys.argv[2] if len(sys.argv) > 2 else "good"
out = os.fdopen(int(os.environ["AAEP_TEST_ANNOUNCEMENTS_FD"]), "w", buffering=1)

KNOWN = {
    "session.started", "session.completed", "session.errored", "session.cancelled",
    "state.changed", "progress.updated", "tool.invoked", "tool.completed",
    "output.streaming", "awaiting.confirmation", "awaiting.clarification", "handoff.requested",
}
SAYS = {
    "session.started": "Session started: ",
    "session.completed": "Session completed: ",
    "session.errored": "Session failed with an error: ",
    "session.cancelled": "Session cancelled: ",
    "tool.invoked": "Calling a tool: ",
}


def say(text, urgency):
    if MODE == "silent":
        return
    out.write(json.dumps({"text": text, "urgency": urgency, "modality": "speech"}) + "\n")


def heard(ev):
    typ = ev.get("type", "")
    short = typ[len("aaep:agent."):] if typ.startswith("aaep:agent.") else typ
    summary = ev.get("summary_normal", "")
    critical = ev.get("urgency") == "critical"
    if critical and MODE == "suppress":
        return
    if short == "state.changed" or ev.get("urgency") == "background":
        return
    if MODE == "summary":
        text = summary
    elif short not in KNOWN:
        text = "Agent event " + short.replace(".", " ") + ": " + summary
    else:
        text = SAYS.get(short, "") + summary
    say(text, "assertive" if critical and MODE != "polite" else "polite")


if MODE == "garbage":
    out.write("this is not JSON\n")
    out.write(json.dumps({"text": "Hello", "urgency": "loud"}) + "\n")
with urllib.request.urlopen(BASE + "/aaep/v1/events", timeout=60) as resp:
    data = []
    for raw in resp:
        line = raw.decode().rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif line == "" and data:
            try:
                heard(json.loads("\n".join(data)))
            except ValueError:
                pass  # not an event: an envelope that fails validation is dropped
            data = []
