package headless_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aaep-tools/aaepkit/internal/headless"
	"github.com/aaep-tools/aaepkit/internal/testdeps"
)

// TestBrowserCloseStopsChromium checks that Close ends the browser: later
// commands fail instead of hanging.
func TestBrowserCloseStopsChromium(t *testing.T) {
	if _, err := headless.Find(); err != nil {
		testdeps.Missing(t, "chromium (Debian package chromium, or $AAEP_CHROMIUM)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := headless.Launch(ctx, headless.Options{})
	if err != nil {
		t.Fatal(err)
	}
	product, err := b.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(product, "Chrome") {
		t.Errorf("Browser.getVersion product = %q", product)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Version(ctx); err == nil {
		t.Error("command after Close succeeded")
	}
}

// TestLaunchMissingBinary checks the error for a browser that is not there.
func TestLaunchMissingBinary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := headless.Launch(ctx, headless.Options{Path: "/nonexistent/chromium"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/chromium") {
		t.Errorf("err = %v, want one naming the binary", err)
	}
}

// TestFindNamesWhatIsMissing checks Find's errors when there is no Chromium
// to launch: none on $PATH, or $AAEP_CHROMIUM naming no program. Launch
// returns the same error.
func TestFindNamesWhatIsMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("AAEP_CHROMIUM", "")
	_, err := headless.Find()
	if !errors.Is(err, headless.ErrNoChromium) {
		t.Errorf("Find with an empty PATH: err = %v, want ErrNoChromium", err)
	}
	for _, want := range []string{"chromium", "AAEP_CHROMIUM", "Debian package"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Find with an empty PATH: err = %v, want it to say %q", err, want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := headless.Launch(ctx, headless.Options{}); !errors.Is(err, headless.ErrNoChromium) {
		t.Errorf("Launch with an empty PATH: err = %v, want ErrNoChromium", err)
	}

	t.Setenv("AAEP_CHROMIUM", "/nonexistent/chrome")
	if _, err := headless.Find(); err == nil || !strings.Contains(err.Error(), "$AAEP_CHROMIUM names /nonexistent/chrome") {
		t.Errorf("Find with AAEP_CHROMIUM=/nonexistent/chrome: err = %v, want one naming it", err)
	}
}
