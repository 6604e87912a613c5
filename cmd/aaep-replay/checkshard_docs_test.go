package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// readYAML parses a file of docs/ as YAML into a generic tree.
func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// dig follows keys (strings for maps, ints for lists) through a YAML tree.
func dig(t *testing.T, what string, v any, keys ...any) any {
	t.Helper()
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok || m[k] == nil {
				t.Fatalf("%s: no %q", what, k)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || len(l) <= k {
				t.Fatalf("%s: no item %d", what, k)
			}
			v = l[k]
		}
	}
	return v
}

// shardCommand checks that a shell command of the docs runs a shard of
// check with its own state and says which flags it uses: --shard I/N with
// the index the scheduler sets, and --state naming that index too.
func shardCommand(t *testing.T, what, cmd, index string, n int) {
	t.Helper()
	cmd = strings.Join(strings.Fields(cmd), " ")
	shard := regexp.MustCompile(`--shard "?` + regexp.QuoteMeta(index) + `/(\d+)"?`).FindStringSubmatch(cmd)
	if shard == nil || shard[1] != strconv.Itoa(n) {
		t.Errorf("%s: the command does not run check --shard %s/%d: %s", what, index, n, cmd)
	}
	if !regexp.MustCompile(`--state "?\S*` + regexp.QuoteMeta(index)).MatchString(cmd) {
		t.Errorf("%s: each shard does not keep its own --state: %s", what, cmd)
	}
	if !strings.HasPrefix(cmd, "aaep-replay check --json") {
		t.Errorf("%s: not a JSON check: %s", what, cmd)
	}
	// The flags exist: parsing them with the index filled in succeeds.
	args := strings.Fields(strings.NewReplacer(`"`, "", index, "0").Replace(cmd))
	end := len(args)
	for i, a := range args {
		if a == ">" {
			end = i
			break
		}
	}
	c := NewCmdCheck(&app{}, func(o *CheckOptions) error { return nil })
	c.SetArgs(args[2:end])
	c.SilenceUsage, c.SilenceErrors = true, true
	if err := c.Execute(); err != nil {
		t.Errorf("%s: %v: %q", what, err, args[2:end])
	}
}

// docs/k8s-check-job.yaml is an Indexed Job of batch/v1 whose pods run
// one shard each, as many shards as completions.
func TestDocsK8sCheckJob(t *testing.T) {
	const path = "../../docs/k8s-check-job.yaml"
	doc := readYAML(t, path)
	if dig(t, path, doc, "apiVersion") != "batch/v1" || dig(t, path, doc, "kind") != "Job" {
		t.Errorf("%s: not a batch/v1 Job", path)
	}
	if dig(t, path, doc, "spec", "completionMode") != "Indexed" {
		t.Errorf("%s: completionMode is not Indexed", path)
	}
	n, ok := dig(t, path, doc, "spec", "completions").(int)
	if !ok || n < 2 || n > 9 {
		t.Fatalf("%s: completions %v", path, dig(t, path, doc, "spec", "completions"))
	}
	if p := dig(t, path, doc, "spec", "parallelism"); p != n {
		t.Errorf("%s: parallelism %v, completions %d", path, p, n)
	}
	pod := dig(t, path, doc, "spec", "template", "spec")
	if r := dig(t, path, pod, "restartPolicy"); r != "Never" && r != "OnFailure" {
		t.Errorf("%s: restartPolicy %v (a Job's pods take Never or OnFailure)", path, r)
	}
	c := dig(t, path, pod, "containers", 0)
	for _, k := range []string{"name", "image"} {
		dig(t, path, c, k)
	}
	shardCommand(t, path, dig(t, path, c, "args", 0).(string), "$JOB_COMPLETION_INDEX", n)
}

// docs/gha-check-matrix.yml is a workflow whose check job runs a matrix of
// shards, and whose merge job needs it and merges their reports.
func TestDocsGHACheckMatrix(t *testing.T) {
	const path = "../../docs/gha-check-matrix.yml"
	doc := readYAML(t, path)
	dig(t, path, doc, "on")
	check := dig(t, path, doc, "jobs", "check")
	dig(t, path, check, "runs-on")
	shards, ok := dig(t, path, check, "strategy", "matrix", "shard").([]any)
	if !ok || len(shards) < 2 {
		t.Fatalf("%s: matrix.shard %v", path, shards)
	}
	for i, s := range shards {
		if s != i {
			t.Errorf("%s: matrix.shard %v: want 0 to N-1", path, shards)
		}
	}
	var ran bool
	for _, s := range dig(t, path, check, "steps").([]any) {
		if run, ok := s.(map[string]any)["run"].(string); ok && strings.Contains(run, "--shard") {
			shardCommand(t, path, run, "${{ matrix.shard }}", len(shards))
			ran = true
		}
	}
	if !ran {
		t.Errorf("%s: no step runs check --shard", path)
	}
	merge := dig(t, path, doc, "jobs", "merge")
	if dig(t, path, merge, "needs") != "check" {
		t.Errorf("%s: the merge job does not need the check job", path)
	}
	var merged bool
	for _, s := range dig(t, path, merge, "steps").([]any) {
		run, _ := s.(map[string]any)["run"].(string)
		if strings.Contains(run, "check --merge-reports") && strings.Count(run, ".json") == len(shards)+1 {
			merged = true
		}
	}
	if !merged {
		t.Errorf("%s: the merge job does not merge the %d reports", path, len(shards))
	}
}
