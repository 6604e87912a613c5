package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/grpcbind/aaepv1"
	"github.com/aaep-tools/aaepkit/grpcbind/grpctest"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/serve"
)

var grpcRE = regexp.MustCompile(`and grpc://([0-9.:]+) `)

// grpcAddr waits for serve's line naming its gRPC address.
func grpcAddr(t *testing.T, s *servingCmd) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := grpcRE.FindStringSubmatch(s.errb.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no gRPC address; stderr %q", s.errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// confirmCapture writes a capture whose second event awaits a confirmation;
// the last comes a second later, time enough for the reply however loaded
// the machine (--close-at-end ends the stream after it).
func confirmCapture(t *testing.T) (string, [][]byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "confirm.aaep")
	w, err := capfile.Create(path, capfile.Header{Start: time.Now(), Tool: "test"}, &capfile.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evs := [][]byte{
		[]byte(`{"type":"aaep:agent.session.started","event_id":"evt_1","session_id":"sess_1","producer":{"agent_id":"cli-test"}}`),
		[]byte(`{"type":"aaep:agent.awaiting.confirmation","event_id":"evt_2","session_id":"sess_1","producer":{"agent_id":"cli-test"},"urgency":"critical","action":"Send","consequence":"Mail goes out","reply_token":"rpl_1","timeout_seconds":300,"default_decision":"reject"}`),
		[]byte(`{"type":"aaep:agent.session.completed","event_id":"evt_3","session_id":"sess_1","producer":{"agent_id":"cli-test"},"summary_normal":"caf\u00e9 é"}`),
	}
	for i, e := range evs {
		at := time.Duration(i) * 10 * time.Millisecond
		if i == len(evs)-1 {
			at = time.Second
		}
		if err := w.Append(&capfile.Record{Kind: capfile.KindReceived, Time: int64(at), Session: "sess_1", Payload: e}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, evs
}

// TestServeGRPCNodeSubscriber serves a subscriber written with Node's
// @grpc/grpc-js over serve --grpc: the manifest, every event byte for
// byte, its reply on the stream accepted and recorded (--record), the
// recording naming the subscriber's transport.
func TestServeGRPCNodeSubscriber(t *testing.T) {
	npm := grpctest.NodeModules(t)
	in, evs := confirmCapture(t)
	record := filepath.Join(t.TempDir(), "wire.aaep")
	srv := startServe(t, "serve", in, "--listen", "127.0.0.1:0", "--grpc", "127.0.0.1:0", "--close-at-end", "--record", record)
	addr := grpcAddr(t, srv)
	cmd := exec.Command("node", grpctest.Peer("subscriber.cjs"), grpctest.ProtoDir(), addr)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(npm, "node_modules"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node subscriber: %v\n%s", err, out)
	}
	var recv [][]byte
	var manifest []byte
	end := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 3 && f[0] == "RECV":
			b, err := hex.DecodeString(f[2])
			if err != nil {
				t.Fatal(err)
			}
			recv = append(recv, b)
		case len(f) == 2 && f[0] == "MANIFEST":
			manifest, _ = hex.DecodeString(f[1])
		case len(f) == 2 && f[0] == "END":
			end = f[1]
		}
	}
	if end != "OK" || len(recv) != 1+len(evs) {
		t.Fatalf("node: end %q, %d messages:\n%s", end, len(recv), out)
	}
	if !bytes.Contains(recv[0], []byte(`"subscription.accepted"`)) {
		t.Errorf("first %s", recv[0])
	}
	for i, e := range evs {
		if !bytes.Equal(recv[i+1], e) {
			t.Errorf("event %d: %s", i, recv[i+1])
		}
	}
	if !bytes.Contains(manifest, []byte(`"aaep:producer.manifest"`)) || !bytes.Contains(manifest, []byte(`"cli-test"`)) {
		t.Errorf("manifest %s", manifest)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(srv.out.String(), "confirmation.reply rpl_1 decision=accept") {
		if time.Now().After(deadline) {
			t.Fatalf("no reply line; stdout %q", srv.out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, srv.errb.String())
	}
	r, err := capfile.Open(record)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	transports := map[string]bool{}
	for _, o := range r.Header().Origins {
		transports[o.Transport] = true
	}
	if !transports["grpc"] {
		t.Errorf("recording's sources %+v", r.Header().Origins)
	}
	replies := 0
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.Kind == capfile.KindSent && bytes.Contains(rec.Payload, []byte(`"confirmation.reply"`)) && rec.Attr("verdict") == serve.VerdictAccepted {
			replies++
		}
	}
	if replies != 1 {
		t.Errorf("%d accepted replies recorded", replies)
	}
	var info syncBuffer
	if code := run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &info, Err: &info}, []string{"info", record}); code != 0 || !strings.Contains(info.String(), " grpc ") {
		t.Errorf("info: exit %d:\n%s", code, info.String())
	}
}

// TestServeGRPCControl: the control API (serve's, and view's replay)
// steers a gRPC subscriber as any other: paused, it gets nothing; each
// step sends one event.
func TestServeGRPCControl(t *testing.T) {
	for _, verb := range [][]string{{"serve", "--control", "--paused"}, {"view"}} {
		t.Run(verb[0], func(t *testing.T) { grpcControl(t, verb) })
	}
}

func grpcControl(t *testing.T, verb []string) {
	in, evs := confirmCapture(t)
	srv := startServe(t, append([]string{verb[0], in, "--listen", "127.0.0.1:0", "--grpc", "127.0.0.1:0"}, verb[1:]...)...)
	addr := grpcAddr(t, srv)
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := aaepv1.NewAaepServiceClient(cc).Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&aaepv1.AaepMessage{Json: []byte(`{"type":"subscription.request","aaep_version":"1.0.0","capabilities":{"supports_confirmation_reply":true}}`)}); err != nil {
		t.Fatal(err)
	}
	if m, err := st.Recv(); err != nil || !bytes.Contains(m.GetJson(), []byte("subscription.accepted")) {
		t.Fatalf("answer %v %v", m, err)
	}
	if n := sentTo(t, srv.addr); n != 0 {
		t.Fatalf("paused, yet %d events sent", n)
	}
	for i := range 2 {
		resp, err := http.Post("http://"+srv.addr+"/control/step?count=1", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		m, err := st.Recv()
		if err != nil || !bytes.Equal(m.GetJson(), evs[i]) {
			t.Fatalf("step %d: %v %v", i, m, err)
		}
	}
	// The server counts an event once its write has returned, which may
	// be after the subscriber read it: wait for the count, never above 2.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		n := sentTo(t, srv.addr)
		if n == 2 {
			break
		}
		if n > 2 || time.Now().After(deadline) {
			t.Fatalf("%d events sent after two steps", n)
		}
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("exit %d: %s", code, srv.errb.String())
	}
}

// sentTo reads /stats: the events sent to the one gRPC subscriber.
func sentTo(t *testing.T, addr string) int64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st serve.Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Subscribers {
		if s.Transport == "grpc" {
			return s.Sent
		}
	}
	t.Fatalf("no gRPC subscriber in %+v", st.Subscribers)
	return 0
}

// TestTestGRPCNodeSubscriber: aaep-replay test --transport grpc plays
// scenarios to Node's @grpc/grpc-js subscriber: the scripted user's reply,
// on the stream, passes; the same subscriber told no decision (it then
// accepts) fails the scenario that wants a rejection.
func TestTestGRPCNodeSubscriber(t *testing.T) {
	npm := grpctest.NodeModules(t)
	node := "NODE_PATH=" + filepath.Join(npm, "node_modules") + " node " + grpctest.Peer("subscriber.cjs") + " " + grpctest.ProtoDir() + " {url} >/dev/null"
	record := filepath.Join(t.TempDir(), "test.aaep")
	for _, tc := range []struct {
		name, exec string
		code       int
		want       string
	}{
		{"scripted decision", node, 0, "PASS: 1 scenarios, 1 passed"},
		{"wrong decision", "AAEP_TEST_DECISIONS='[]' " + node, 1, "FAIL: 1 scenarios, 0 passed, 1 failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb syncBuffer
			args := []string{"test", "--scenario", "confirmation-reject", "--transport", "grpc", "--exec", tc.exec}
			if tc.code == 0 {
				args = append(args, "--record", record)
			}
			code := run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, args)
			if code != tc.code || !strings.Contains(out.String(), tc.want) {
				t.Fatalf("exit %d:\n%s\n%s", code, out.String(), errb.String())
			}
		})
	}
	r, err := capfile.Open(record)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	grpcSource := false
	for _, o := range r.Header().Origins {
		grpcSource = grpcSource || o.Transport == "grpc"
	}
	if !grpcSource {
		t.Errorf("the recording's sources %+v name no gRPC subscriber", r.Header().Origins)
	}
}

// TestServeGRPCUnderLoad: the real aaep-replay serve --grpc --no-delay,
// held to one processor (GOMAXPROCS=1) with a process burning a CPU beside
// it, replays to 50 gRPC subscribers at once, each reading as fast as it
// can: every one gets every event, byte for byte and in order, after
// exactly one answer to its request.
func TestServeGRPCUnderLoad(t *testing.T) {
	t.Parallel() // beside the other stress test: both mostly wait
	const events, subscribers = 1000, 50
	path, want := stressCapture(t, events)
	burner := exec.Command("sh", "-c", "while :; do :; done")
	if err := burner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = burner.Process.Kill(); _ = burner.Wait() })
	cmd := exec.Command(replayBin.Path(t), "serve", path, "--listen", "127.0.0.1:0", "--grpc", "127.0.0.1:0", "--no-delay")
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	stderr := &syncBuffer{}
	cmd.Stderr, cmd.Stdout = stderr, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var addr string
	for deadline := time.Now().Add(20 * time.Second); addr == ""; time.Sleep(10 * time.Millisecond) {
		if m := grpcRE.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("aaep-replay did not start listening: %q", stderr.String())
		}
	}
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	client := aaepv1.NewAaepServiceClient(cc)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	errs := make(chan error, subscribers)
	for i := range subscribers {
		go func() {
			errs <- func() error {
				sctx, stop := context.WithCancel(ctx)
				defer stop()
				st, err := client.Subscribe(sctx)
				if err != nil {
					return err
				}
				req := fmt.Sprintf(`{"type":"subscription.request","aaep_version":"1.0.0","subscriber_id":"load-%d","capabilities":{}}`, i)
				if err := st.Send(&aaepv1.AaepMessage{Json: []byte(req)}); err != nil {
					return err
				}
				first, err := st.Recv()
				if err != nil || !bytes.Contains(first.GetJson(), []byte(`"subscription.accepted"`)) {
					return fmt.Errorf("subscriber %d: answer %v %v", i, first, err)
				}
				for n := range events {
					m, err := st.Recv()
					if err != nil {
						return fmt.Errorf("subscriber %d: event %d: %w", i, n, err)
					}
					if sha256.Sum256(m.GetJson()) != want[n] {
						return fmt.Errorf("subscriber %d: event %d differs: %.80s", i, n, m.GetJson())
					}
				}
				return nil
			}()
		}()
	}
	for range subscribers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
