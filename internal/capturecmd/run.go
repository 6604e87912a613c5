package capturecmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aaep-tools/aaepkit/capfile"
	"github.com/aaep-tools/aaepkit/internal/capedit"
	"github.com/aaep-tools/aaepkit/internal/capmetrics"
	"github.com/aaep-tools/aaepkit/internal/cli"
	"github.com/aaep-tools/aaepkit/internal/recorder"
	"github.com/aaep-tools/aaepkit/msgfilter"
	"github.com/aaep-tools/aaepkit/objstore"
	"github.com/aaep-tools/aaepkit/transport"
)

// Stop reasons of the summary, beside recorder.StopMaxEvents/StopMaxBytes.
const (
	stopDuration    = "duration"
	stopInterrupted = "interrupted"
	stopEnded       = "sources ended"
	stopFailed      = "source failed"
)

// sourceResult is how one source ended.
type sourceResult struct {
	info transport.Info
	err  error
}

// sourceResults are the results of the sources, set as they end.
type sourceResults struct {
	mu   sync.Mutex
	list []sourceResult
}

func (r *sourceResults) set(i int, res sourceResult) {
	r.mu.Lock()
	r.list[i] = res
	r.mu.Unlock()
}

// snapshot copies the results: a source still running has none.
func (r *sourceResults) snapshot() []sourceResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sourceResult(nil), r.list...)
}

// captureRun records until a stop condition and prints the summary.
func captureRun(o *options) error {
	header, err := parseHeaders(o.headers)
	if err != nil {
		return err
	}
	tlsConf, err := tlsConfig(o.cacert, o.insecure, o.cert, o.key)
	if err != nil {
		return cli.Input(err)
	}
	if o.insecure {
		fmt.Fprintln(o.Err, "aaep-capture: warning: --insecure: TLS certificates are not verified")
	}
	var spec []byte
	if o.subFile != "" {
		if spec, err = os.ReadFile(o.subFile); err != nil {
			return cli.Input(fmt.Errorf("--subscribe-file: %w", err))
		}
	}
	request, err := transport.SubscriptionRequest(spec, version)
	if err != nil {
		return cli.Input(fmt.Errorf("--subscribe-file %s: %w", o.subFile, err))
	}
	framing, _ := transport.ParseFraming(o.framing)

	clock := transport.NewClock()
	watch := newWatcher(nil)
	sopts := transport.Options{
		Status:         watch.status,
		Clock:          clock,
		Header:         header,
		TLS:            tlsConf,
		MaxMessageSize: int64(o.maxMessage),
		Retry:          transport.Retry{Max: o.retryWait, MaxRetries: o.maxRetries, Wait: o.wait},
		StreamDeadline: o.deadline,
		Subscribe:      o.subscribe,
		Request:        request,
		Framing:        framing,
		Follow:         o.follow,
		Stdin:          o.In,
		Stderr:         o.Err,
	}
	var sources []transport.Source
	for _, e := range o.endpoints {
		src, err := transport.New(e, sopts)
		if err != nil {
			return cli.Usagef("%w", err)
		}
		sources = append(sources, src)
	}
	if o.exec {
		src, err := transport.NewExec(o.execArgs, sopts)
		if err != nil {
			return cli.Usagef("%w", err)
		}
		sources = append(sources, src)
	}
	if len(sources) > 0xFFFF {
		return cli.Usagef("too many endpoints (%d)", len(sources))
	}
	if o.follow && !hasFileSource(sources) {
		return cli.Usagef("--follow applies to a file endpoint; there is none")
	}
	if err := o.checkFileEndpoints(); err != nil {
		return err
	}

	h := capfile.Header{Tool: capfile.ToolCapture + "/" + version, Meta: meta(o)}
	for i, s := range sources {
		info := s.Info()
		h.Origins = append(h.Origins, capfile.Origin{ID: uint16(i), Transport: info.Transport, Endpoint: info.Endpoint, Subprotocol: info.Subprotocol})
	}

	parent := o.ctx
	if parent == nil {
		parent = context.Background()
	}
	hard := hardStop(parent)
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	metrics := &captureMetrics{start: time.Now(), sources: len(sources)}
	if o.metrics != "" {
		ms, err := capmetrics.Listen(o.metrics, metrics.collect)
		if err != nil {
			return cli.Usagef("--metrics %s: %w", o.metrics, err)
		}
		defer ms.Close()
		if !o.quiet {
			fmt.Fprintf(o.Err, "aaep-capture: metrics at http://%s/metrics\n", ms.Addr())
		}
	}
	outPath := o.output
	var remote *remoteOutput
	if objstore.IsURL(o.output) {
		if remote, err = openRemoteOutput(ctx, o); err != nil {
			return err
		}
		outPath = remote.local
	}
	// --duration counts from here (the start-up check of object storage
	// runs beside the recording).
	runCtx := ctx
	if o.duration > 0 {
		var cancelTimeout context.CancelFunc
		runCtx, cancelTimeout = context.WithTimeout(ctx, o.duration)
		defer cancelTimeout()
	}
	rcfg := recorder.Config{
		Path:        outPath,
		Force:       o.force,
		Inputs:      o.inputFiles(),
		Stdout:      o.Out,
		Header:      h,
		Writer:      capfile.WriterOptions{FlushInterval: o.flushEvery},
		Clock:       clock,
		Filter:      msgfilter.Filter{Types: o.filterTypes, Sessions: o.filterSess, Urgencies: o.filterUrg},
		Redact:      o.redact,
		MaxEvents:   o.maxEvents,
		MaxBytes:    int64(o.maxBytes),
		RotateSize:  int64(o.rotateSize),
		RotateEvery: o.rotateEvery,
		Ring:        o.ring,
		Secrets:     secrets(header, o.endpoints),
		OnStop:      func(string) { cancel() },
	}
	if remote != nil {
		rcfg.OnPartClosed = remote.up.Add
		if remote.rotating {
			rcfg.PartName = remote.partName
		}
	}
	rec, err := recorder.New(rcfg)
	if err != nil {
		if remote != nil {
			remote.finish(hard, o.storage.uploadWait)
		}
		return cli.Output(err)
	}

	metrics.set(rec, remote)
	prog := startProgress(o, rec, clock, watch.line)
	if !o.quiet {
		watch.print = prog.printf
	}
	if remote != nil {
		remote.logs.use(prog.printf)
	}
	// The start-up check of object storage runs beside the recording: a
	// check that fails for good stops it, and what was recorded stays in
	// the spool.
	var checkErr error
	checkDone := make(chan struct{})
	checkCtx, cancelCheck := context.WithCancel(ctx)
	if remote != nil {
		checked := remote.startCheck(checkCtx)
		go func() {
			defer close(checkDone)
			if err, ok := <-checked; ok && err != nil {
				checkErr = err
				prog.printf("aaep-capture: %v; stopping the recording: what was recorded stays in the spool %s\n", err, remote.up.Dir())
				cancel()
			}
		}()
	} else {
		close(checkDone)
	}
	// The first signal: say what is waited for, and for how long.
	stopSaid := context.AfterFunc(parent, func() { prog.printf("aaep-capture: %s\n", stoppingLine(remote != nil, o.storage.uploadWait)) })
	defer stopSaid()
	res := &sourceResults{list: make([]sourceResult, len(sources))}
	for i, src := range sources {
		res.list[i].info = src.Info()
	}
	var wg sync.WaitGroup
	for i, src := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := src.Run(runCtx, watch.emit(uint16(i), rec.Emit(uint16(i))))
			res.set(i, sourceResult{info: src.Info(), err: err})
			if err != nil && !errors.Is(err, recorder.ErrWrite) {
				prog.printf("aaep-capture: %s: %v\n", src.Info().Endpoint, err)
			}
			if errors.Is(err, recorder.ErrWrite) {
				cancel() // the file is gone: stop everything
			}
		}()
	}
	// A second signal (the hard stop) stops waiting for sources that do
	// not end.
	sourcesDone := make(chan struct{})
	go func() {
		wg.Wait()
		close(sourcesDone)
	}()
	select {
	case <-sourcesDone:
	case <-hard.Done():
	}
	results := res.snapshot()
	prog.stop()
	closeErr := rec.Close()
	elapsed := time.Duration(clock.Now())

	st := rec.Stats()
	cancelCheck()
	<-checkDone
	var uploadErr error
	if remote != nil {
		wait := o.storage.uploadWait
		if checkErr != nil {
			wait = 0 // the uploads cannot succeed: the parts stay
		}
		uploadErr = remote.finish(hard, wait)
		st.Files = remote.objects(st.Files)
	}
	reason := st.StopReason
	switch {
	case reason != "":
	case parent.Err() != nil:
		reason = stopInterrupted
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		reason = stopDuration
	case anyFailed(results):
		reason = stopFailed
	default:
		reason = stopEnded
	}
	kind := endKind(results, closeErr)
	var dropErr error
	if remote != nil {
		dropErr = remote.droppedErr()
	}
	if checkErr != nil && kind == "" {
		// startCheck's (unavailable, or an output that exists) comes
		// first: it is why the parts were not uploaded.
		kind = cli.KindOf(checkErr)
	}
	if (uploadErr != nil || dropErr != nil) && kind == "" {
		kind = cli.KindUnavailable
	}
	if kind == "" && remote == nil && len(st.Files) == 0 && len(st.NotReplaced) == 0 {
		// Stopped (Ctrl-C while --wait waited, say) before anything was
		// recorded: no capture, so no success.
		kind = cli.KindFailure
	}
	for _, kept := range st.NotReplaced {
		// --force replaces a capture only with one that recorded something.
		fmt.Fprintf(o.Err, "aaep-capture: %s: no message was recorded; the existing file is kept, not replaced\n", kept)
		if kind == "" {
			kind = cli.KindFailure
		}
	}
	var end error // what the command returns once the summary is out
	if kind != "" {
		end = cli.Silent(kind)
	}
	sum := newSummary(st, results, reason, elapsed, cli.Code(end))
	sum.Withheld = watch.withheld()
	if remote != nil {
		sum.Upload = remote.summary()
		if err := errors.Join(checkErr, dropErr, uploadErr); err != nil {
			sum.Upload.Error = err.Error()
			fmt.Fprintf(o.Err, "aaep-capture: %v\n", err)
		}
	}
	if !o.quiet {
		fmt.Fprintln(o.Err, sum.line())
	}
	if sum.Upload != nil {
		// Printed with --quiet too: what is stored, what stays.
		fmt.Fprintln(o.Err, sum.Upload.line())
	}
	if o.json {
		if err := sum.writeJSON(o.Out); err != nil {
			return cli.Output(err)
		}
	}
	switch {
	case closeErr != nil:
		return cli.Output(closeErr)
	case end != nil:
		return end
	}
	return nil
}

// stoppingLine says, after the first signal, what the recorder waits for
// and how long: the sources to close and the capture's end to be written,
// and with an s3:// output the uploads, for --upload-wait at most.
func stoppingLine(remote bool, uploadWait time.Duration) string {
	if !remote {
		return "stopping: closing the sources and writing the end of the capture (seconds at most); a second signal stops at once"
	}
	return fmt.Sprintf("stopping: closing the sources and the last part, then waiting up to %v (--upload-wait) for the parts still to upload; a second signal stops waiting (what is not uploaded stays in the spool, uploaded first by the next run)", uploadWait)
}

func anyFailed(results []sourceResult) bool {
	for _, r := range results {
		if r.err != nil {
			return true
		}
	}
	return false
}

// endKind is what ended a capture badly ("" when nothing did): a write
// failure is an output error, a file source that cannot be read an input
// error (either wins), an endpoint that failed unavailable.
func endKind(results []sourceResult, closeErr error) cli.Kind {
	if closeErr != nil {
		return cli.KindOutput
	}
	var kind cli.Kind
	for _, r := range results {
		switch {
		case r.err == nil:
		case errors.Is(r.err, transport.ErrFailed):
			if kind == "" {
				kind = cli.KindUnavailable
			}
		default:
			kind = cli.KindInput
		}
	}
	return kind
}

// inputFiles are the files the capture reads: file endpoints,
// --subscribe-file, --cacert, --cert and --key. The output is never one of them.
func (o *options) inputFiles() []string {
	var files []string
	for _, e := range o.endpoints {
		if isFileEndpoint(e) {
			files = append(files, e)
		}
	}
	return append(files, o.subFile, o.cacert, o.cert, o.key)
}

// isFileEndpoint reports an endpoint that names a local file (not a URL,
// not exec:, not standard input).
func isFileEndpoint(e string) bool {
	return e != "-" && !strings.Contains(e, "://") && !strings.HasPrefix(e, "exec:")
}

// checkFileEndpoints refuses file endpoints that are not JSON Lines: a
// capture, a zstd file, a file none of whose lines is JSON.
func (o *options) checkFileEndpoints() error {
	for _, e := range o.endpoints {
		if !isFileEndpoint(e) {
			continue
		}
		if st, err := os.Stat(e); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
			// A FIFO or a device is a stream, read once by its source: a
			// look here would take the bytes it holds (and could wait for
			// a writer before any signal is handled).
			continue
		}
		if err := capedit.SniffJSONL(e); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return cli.Input(fmt.Errorf("open input: %w", err))
			}
			if errors.Is(err, capedit.ErrIsCapture) {
				return cli.Usagef("%w: aaep-replay serves, checks and draws it as it is", err)
			}
			return cli.Input(err)
		}
	}
	return nil
}

func hasFileSource(sources []transport.Source) bool {
	for _, s := range sources {
		if s.Info().Transport == "file" {
			return true
		}
	}
	return false
}

// meta records in the header how the capture was narrowed.
func meta(o *options) map[string]string {
	m := map[string]string{}
	add := func(k string, vs []string) {
		if len(vs) > 0 {
			m[k] = strings.Join(vs, ",")
		}
	}
	add("filter-type", o.filterTypes)
	add("filter-session", o.filterSess)
	add("filter-urgency", o.filterUrg)
	if o.maxMessage != transport.DefaultMaxMessageSize {
		m["max-message-size"] = strconv.FormatInt(int64(o.maxMessage), 10)
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
