package subtest

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/aaep-tools/aaepkit/internal/headless"
)

// heardJS is the observer injected into a --page subscriber: it records
// what a screen reader would announce of the page's live regions.
//
//go:embed heard.js
var heardJS string

// Browser is the headless Chromium --page opens web subscribers in (the
// same launcher and flags as the repository's browser tests: Debian's
// chromium, or $AAEP_CHROMIUM). It starts on first use; each scenario gets
// a tab of its own, closed when the scenario is over. Close it when the
// run is done.
type Browser struct {
	mu  sync.Mutex
	b   *headless.Browser
	err error
}

// Close stops the browser, if it was started.
func (b *Browser) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b != nil {
		return b.b.Close()
	}
	return nil
}

func (b *Browser) open(ctx context.Context) (*headless.Page, error) {
	b.mu.Lock()
	if b.b == nil && b.err == nil {
		b.b, b.err = headless.Launch(ctx, headless.Options{})
	}
	br, err := b.b, b.err
	b.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("--page: %w", err)
	}
	p, err := br.OpenPage(ctx)
	if err != nil {
		return nil, fmt.Errorf("--page: open a tab: %w", err)
	}
	return p, nil
}

// PageURL is the page a --page subscriber is opened at: {url} replaced by
// the replay's base URL (as --exec), {decisions} by the scripted user's
// decisions (AAEP_TEST_DECISIONS, query-escaped) and {scenario} by the
// scenario's name.
func PageURL(pattern, base string, sc *Scenario) string {
	return strings.NewReplacer("{url}", base, "{decisions}", url.QueryEscape(decisionsJSON(sc.Decisions)),
		"{scenario}", url.QueryEscape(sc.Name)).Replace(pattern)
}

// pageSubscriber is a web subscriber in a tab.
type pageSubscriber struct {
	p     *headless.Page
	start time.Time
	url   string
}

// openPage opens the --page subscriber with the observer in place before
// any of its scripts run; the load must come within the attach timeout.
func (r *runner) openPage(ctx context.Context, base string) (*pageSubscriber, error) {
	b := r.o.Browser
	p, err := b.open(ctx)
	if err != nil {
		return nil, err
	}
	ps := &pageSubscriber{p: p, start: r.start, url: PageURL(r.o.Page, base, r.sc)}
	c, cancel := context.WithTimeout(ctx, r.o.AttachTimeout)
	defer cancel()
	err = p.Run(c, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: heardJS})
		return err
	}))
	if err == nil {
		err = p.Goto(c, ps.url)
	}
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("--page %s: %w", ps.url, err)
	}
	return ps, nil
}

// observed reads what the page announced, and, for a page that announced
// nothing, which live regions its accessibility tree has.
func (ps *pageSubscriber) observed(ctx context.Context) (*observation, error) {
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var raw []struct {
		T          float64 `json:"t"`
		Text       string  `json:"text"`
		Politeness string  `json:"politeness"`
		Region     string  `json:"region"`
	}
	if err := ps.p.Evaluate(c, "window.__aaepHeard || null", &raw); err != nil {
		return nil, fmt.Errorf("--page: reading the page's announcements: %w", err)
	}
	if raw == nil {
		return nil, errors.New("--page: the page's announcements are gone (did it navigate away?)")
	}
	obs := &observation{From: "page", List: []Announcement{}}
	for _, a := range raw {
		if len(obs.List) >= maxHeard {
			break
		}
		at := time.Unix(0, int64(a.T*1e6)).Sub(ps.start)
		obs.List = append(obs.List, Announcement{Offset: at, Text: a.Text, Politeness: a.Politeness, Modality: "live region", Region: a.Region})
	}
	if len(obs.List) == 0 {
		obs.Note = ps.liveRegions(c)
	}
	return obs, nil
}

// liveRegions describes the live regions of the page's accessibility
// tree (the roots of what a screen reader announces as it changes).
func (ps *pageSubscriber) liveRegions(ctx context.Context) string {
	var nodes []*accessibility.Node
	err := ps.p.Run(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		res, err := cdp.Call(ctx, t, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
		nodes = res.Nodes
		return err
	}))
	if err != nil {
		return "its accessibility tree could not be read: " + err.Error()
	}
	var regions []string
	for _, n := range nodes {
		if n.Ignored {
			continue
		}
		live, root := "", false
		for _, p := range n.Properties {
			switch p.Name {
			case accessibility.PropertyNameLive:
				live = axString(p.Value)
			case accessibility.PropertyNameRoot:
				root = true
			}
		}
		if live != "" && live != "off" && !root {
			regions = append(regions, fmt.Sprintf("%s (%s)", axString(n.Role), live))
		}
	}
	if len(regions) == 0 {
		return "the page's accessibility tree has no live region: a screen reader hears none of its updates"
	}
	return "the page's accessibility tree has live regions (" + strings.Join(regions, ", ") + "), and nothing was added to them"
}

func axString(v *accessibility.Value) string {
	if v == nil {
		return ""
	}
	return strings.Trim(string(v.Value), `"`)
}

// close closes the tab, writing what the page logged to its console to out.
func (ps *pageSubscriber) close(out io.Writer) {
	for _, l := range ps.p.Logs() {
		fmt.Fprintf(out, "page: %s\n", l)
	}
	ps.p.Close()
}
