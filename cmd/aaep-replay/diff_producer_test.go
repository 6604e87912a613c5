package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// mockAgent behaves on the wire like the TypeScript reference producer with
// its mock model, as the issue describes it: SSE at /events with data: lines
// only, sessions started by POST /sessions {"user_message": ...}, and a
// model that calls a tool only on its first call, for a prompt that
// mentions "balance" or "email". Every run makes new ids, takes its own
// time and cuts its answers into chunks at other places.
type mockAgent struct {
	mu    sync.Mutex
	sub   chan string
	calls int
	rng   *mrand.Rand
	// subscribed gets a value when a subscriber opens /events.
	subscribed chan struct{}
}

func (p *mockAgent) start(t *testing.T) string {
	t.Helper()
	var seed [16]byte
	rand.Read(seed[:])
	p.rng = mrand.New(mrand.NewChaCha8([32]byte(append(seed[:], seed[:]...))))
	p.sub = make(chan string, 256)
	p.subscribed = make(chan struct{}, 16)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func (p *mockAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/events":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		p.subscribed <- struct{}{}
		for {
			select {
			case ev := <-p.sub:
				fmt.Fprintf(w, "data: %s\n\n", ev)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case "/sessions":
		var req struct {
			UserMessage string `json:"user_message"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.session(req.UserMessage)
		w.WriteHeader(http.StatusAccepted)
	default:
		http.NotFound(w, r)
	}
}

func randomID(prefix string) string {
	var b [8]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// session runs one session to its end: the mock model's answer, with a
// tool call on the model's first call when the prompt asks for one.
func (p *mockAgent) session(prompt string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	sid := randomID("sess_")
	seq := 0
	emit := func(typ string, fields map[string]any) {
		ev := map[string]any{
			"@context": "https://aaep-protocol.org/context/v1", "type": "aaep:agent." + typ,
			"event_id": randomID("evt_"), "session_id": sid, "sequence_number": seq,
			"timestamp": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
			"producer":  map[string]any{"agent_id": "ts-mock"}, "urgency": "normal",
		}
		for k, v := range fields {
			ev[k] = v
		}
		seq++
		b, _ := json.Marshal(ev)
		p.sub <- string(b)
		time.Sleep(time.Duration(1+p.rng.IntN(3)) * time.Millisecond)
	}
	state := func(from, to string) {
		emit("state.changed", map[string]any{"from_state": from, "to_state": to, "summary_normal": "Now " + to + "."})
	}
	emit("session.started", map[string]any{"request_text": prompt, "summary_normal": "Working on your request."})
	state("idle", "thinking")
	answer := "I can help with that. Here is what I found for you today."
	lower := strings.ToLower(prompt)
	if p.calls == 1 && (strings.Contains(lower, "balance") || strings.Contains(lower, "email")) {
		tool, args := "get_balance", "account: checking"
		if strings.Contains(lower, "email") {
			tool, args = "send_email", "to: team"
		}
		call := randomID("call_")
		state("thinking", "calling_tool")
		emit("tool.invoked", map[string]any{"tool": tool, "tool_call_id": call, "args_summary": args, "risk_level": "low", "summary_normal": "Calling " + tool + "."})
		emit("tool.completed", map[string]any{"tool": tool, "tool_call_id": call, "status": "success", "summary_normal": "Done."})
		state("calling_tool", "writing_output")
		answer = "Your checking account holds 1,024.00 euros as of today."
	} else {
		state("thinking", "writing_output")
	}
	// Three chunks, cut at places of this run's choosing.
	out := randomID("out_")
	cuts := []int{0, 5 + p.rng.IntN(15), 25 + p.rng.IntN(15), len(answer)}
	for i := 0; i < 3; i++ {
		emit("output.streaming", map[string]any{"output_id": out, "chunk": answer[cuts[i]:cuts[i+1]], "position": cuts[i], "complete": i == 2, "coalesce_hint": "sentence"})
	}
	state("writing_output", "idle")
	emit("session.completed", map[string]any{"summary_normal": "Done."})
}

// recordAgent runs a new mock agent (as the reference producer is
// restarted for each recording), records it with the real aaep-capture
// over SSE while the prompts are played to it one after the other, and
// returns the recording.
func recordAgent(t *testing.T, dir, name string, prompts []string) string {
	t.Helper()
	p := &mockAgent{}
	base := p.start(t)
	events := 0
	for i, prompt := range prompts {
		events += 8 // started, 2 state changes, 3 chunks, a state change, completed
		l := strings.ToLower(prompt)
		if i == 0 && (strings.Contains(l, "balance") || strings.Contains(l, "email")) {
			events += 3 // calling_tool, invoked, completed
		}
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command(captureBin.Path(t), base+"/events", "-o", out, "--max-events", fmt.Sprint(events), "--duration", "60s", "-q")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-p.subscribed:
	case err := <-done:
		t.Fatalf("aaep-capture ended before subscribing: %v\n%s", err, stderr.String())
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("aaep-capture did not subscribe\n%s", stderr.String())
	}
	for _, prompt := range prompts {
		body, _ := json.Marshal(map[string]string{"user_message": prompt})
		resp, err := http.Post(base+"/sessions", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("aaep-capture: %v\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("aaep-capture did not stop\n%s", stderr.String())
	}
	return out
}

// TestDiffRecordingsOfTheMockAgent: the quality bar. The agent
// recorded twice with the same prompts differs in nothing (new ids, times
// and chunk boundaries); with the first prompt changed, exactly that
// session differs, and the tool call it lost is named.
func TestDiffRecordingsOfTheMockAgent(t *testing.T) {
	dir := t.TempDir()
	prompts := []string{"What is my balance?", "Summarise my week.", "What is my balance now?", "Plan a trip to Oslo."}
	first := recordAgent(t, dir, "first.aaep", prompts)
	again := recordAgent(t, dir, "again.aaep", prompts)
	changed := recordAgent(t, dir, "changed.aaep", append([]string{"Tell me a joke."}, prompts[1:]...))

	code, out, stderr := replay(t, "diff", first, again)
	if code != 0 || !strings.HasPrefix(out, "same: 4 sessions: 4 same") {
		t.Errorf("the same prompts: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = replay(t, "diff", "--json", first, changed)
	var doc struct {
		Counts   map[string]int
		Sessions []struct {
			Status    string
			A         struct{ Start string }
			ToolCalls []struct {
				Op string
				A  *struct {
					Name string
					Args string `json:"args_summary"`
				}
			} `json:"tool_calls"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d, %v\n%s%s", code, err, out, stderr)
	}
	if code != 1 || doc.Counts["different"] != 1 || doc.Counts["same"] != 3 {
		t.Fatalf("a changed first prompt: exit %d, counts %v\n%s", code, doc.Counts, stderr)
	}
	for _, s := range doc.Sessions {
		if s.Status != "different" {
			continue
		}
		if s.A.Start != prompts[0] {
			t.Errorf("session %q differs, want the first", s.A.Start)
		}
		if len(s.ToolCalls) != 1 || s.ToolCalls[0].Op != "-" || s.ToolCalls[0].A == nil || s.ToolCalls[0].A.Name != "get_balance" {
			t.Errorf("tool calls %+v, want get_balance lost", s.ToolCalls)
		}
	}
	// The text names it too.
	_, out, _ = replay(t, "diff", first, changed)
	if !strings.Contains(out, "-tool.invoked get_balance\n") || !strings.Contains(out, "-get_balance (reversible, risk low, args \"account: checking\", success)\n") {
		t.Errorf("the text does not name the lost tool call:\n%s", out)
	}
}
