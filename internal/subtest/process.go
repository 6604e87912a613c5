package subtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/internal/procgroup"
)

// process is an exec'd subscriber.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// startProcess runs command (with {url} replaced) in its own process
// group, telling it the scenario in its environment; heard, when not nil,
// is its descriptor 3, for its announcements (AAEP_TEST_ANNOUNCEMENTS_FD).
func startProcess(command, url string, sc *Scenario, out io.Writer, heard *os.File) (*process, error) {
	cmd := shell(strings.ReplaceAll(command, "{url}", url))
	cmd.Stdout, cmd.Stderr = out, out
	procgroup.Set(cmd)
	cmd.Env = append(os.Environ(),
		"AAEP_TEST_URL="+url,
		"AAEP_TEST_SCENARIO="+sc.Name,
		fmt.Sprintf("AAEP_TEST_LEVEL=%d", sc.Level),
		"AAEP_TEST_USER="+sc.User,
		"AAEP_TEST_DECISIONS="+decisionsJSON(sc.Decisions),
	)
	if heard != nil {
		cmd.ExtraFiles = []*os.File{heard}
		cmd.Env = append(cmd.Env, fmt.Sprintf("AAEP_TEST_ANNOUNCEMENTS_FD=%d", AnnouncementsFD))
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("--exec: %w", err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		if p.err == nil {
			p.err = errors.New("exit status 0")
		}
		close(p.done)
	}()
	return p, nil
}

// decisionsJSON is the scripted user's decisions for a harness.
func decisionsJSON(ds []Decision) string {
	b, _ := json.Marshal(orEmpty(ds))
	return string(b)
}

// stop ends the process group: SIGTERM, then SIGKILL after two seconds.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	procgroup.Interrupt(p.cmd)
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		procgroup.Kill(p.cmd)
		<-p.done
	}
}
