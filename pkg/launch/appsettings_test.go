package launch_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/durable"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/launch"
)

type shipment struct {
	Done bool `json:"done"`
}

// durableApp is an app with one durable graph, so its fg_orchestrator queue trigger reads
// FUNCGRAPH_WORK_QUEUE. extra, if set, changes the function app further.
func durableApp(extra func(*funchost.FunctionApp) error) launch.Builder {
	return func(_ context.Context, s launch.Settings) (*launch.App, error) {
		h, err := host.New(host.Options{Logger: s.Logger})
		if err != nil {
			return nil, err
		}
		b := durable.NewManifestBuilder[shipment]("ship")
		b.SetEntrypoint("ship")
		_ = b.AddStep("ship", func(_ context.Context, o shipment) (shipment, error) { o.Done = true; return o, nil }, durable.Terminal())
		g, err := b.Build()
		if err != nil {
			return nil, err
		}
		a, err := launch.HostApp(s, h, launch.DurableOptions{}, g)
		if err == nil && extra != nil {
			err = extra(a.FunctionApp)
		}
		return a, err
	}
}

// startErr runs build with env until it listens (then stops it and returns nil) or fails.
func startErr(t *testing.T, build launch.Builder, args []string, env map[string]string) error {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	listening := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- launch.Run(ctx, build, launch.Options{Args: args, Getenv: envOf(env), Logger: discard(),
			OnListen: func(net.Addr) { listening <- struct{}{} }})
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Run returned nil without listening")
		}
		return err
	case <-listening:
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run after listening: %v", err)
		}
		return nil
	case <-time.After(20 * time.Second):
		t.Fatal("Run neither listened nor failed")
		return nil
	}
}

// TestRun_WorkQueueSetting: the queue trigger reads its queue name from FUNCGRAPH_WORK_QUEUE,
// the engine writes to <FUNCGRAPH_STORAGE_PREFIX>-work; the app refuses to start when they
// disagree, naming both names and both settings, instead of leaving every run Pending.
func TestRun_WorkQueueSetting(t *testing.T) {
	handler := map[string]string{"FUNCTIONS_CUSTOMHANDLER_PORT": "0"}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	serve := []string{"serve", "--addr", "127.0.0.1:0"}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want []string // fragments of the error; none = it starts
	}{
		{name: "host: setting names another prefix's queue", env: with(handler, "FUNCGRAPH_WORK_QUEUE", "myagent-work"),
			want: []string{`FUNCGRAPH_WORK_QUEUE="myagent-work"`, `"funcgraph-work"`, "FUNCGRAPH_STORAGE_PREFIX unset", "stay Pending",
				"set FUNCGRAPH_WORK_QUEUE=funcgraph-work, or FUNCGRAPH_STORAGE_PREFIX=myagent"}},
		{name: "host: prefix changed after staging", env: with(handler, "FUNCGRAPH_WORK_QUEUE", "funcgraph-work", launch.EnvStoragePrefix, "myagent"),
			want: []string{`FUNCGRAPH_WORK_QUEUE="funcgraph-work"`, `FUNCGRAPH_STORAGE_PREFIX="myagent"`, `"myagent-work"`, "fg_orchestrator"}},
		{name: "host: setting missing", env: handler,
			want: []string{"app setting FUNCGRAPH_WORK_QUEUE is not set", "%FUNCGRAPH_WORK_QUEUE%", "fg_orchestrator", "FUNCGRAPH_WORK_QUEUE=funcgraph-work"}},
		{name: "host: agreeing settings", env: with(handler, "FUNCGRAPH_WORK_QUEUE", "myagent-work", launch.EnvStoragePrefix, "myagent")},
		{name: "serve: setting names another queue", args: serve, env: map[string]string{"FUNCGRAPH_WORK_QUEUE": "other-work"},
			want: []string{`FUNCGRAPH_WORK_QUEUE="other-work"`, `"funcgraph-work"`}},
		{name: "serve: setting unset", args: serve, env: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := startErr(t, durableApp(nil), tc.args, tc.env)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("the app started")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestRun_OtherBoundSetting: any other name the generated function.json reads from a setting
// is checked the same way.
func TestRun_OtherBoundSetting(t *testing.T) {
	jobs := func(app *funchost.FunctionApp) error {
		if err := app.HandleQueue(funchost.QueueFunction{Name: "jobs", QueueName: "jobs-in",
			Handler: func(context.Context, funchost.QueueMessage) (funchost.Outputs, error) { return nil, nil }}); err != nil {
			return err
		}
		return app.BindQueueName("jobs-in", "JOBS_QUEUE")
	}
	env := map[string]string{"FUNCTIONS_CUSTOMHANDLER_PORT": "0", "FUNCGRAPH_WORK_QUEUE": "funcgraph-work", "JOBS_QUEUE": "jobs-out"}
	err := startErr(t, durableApp(jobs), nil, env)
	if err == nil || !strings.Contains(err.Error(), `app setting JOBS_QUEUE="jobs-out", but the app uses "jobs-in"`) {
		t.Fatalf("err = %v, want the JOBS_QUEUE mismatch", err)
	}
	env["JOBS_QUEUE"] = "jobs-in"
	if err := startErr(t, durableApp(jobs), nil, env); err != nil {
		t.Fatalf("agreeing settings: %v", err)
	}
}

// TestRun_NoDurableGraph_NeedsNoWorkQueueSetting: an app without a queue trigger starts under
// the host without FUNCGRAPH_WORK_QUEUE.
func TestRun_NoDurableGraph_NeedsNoWorkQueueSetting(t *testing.T) {
	var started bool
	var closed int
	if err := startErr(t, tinyApp(&started, &closed), nil, map[string]string{"FUNCTIONS_CUSTOMHANDLER_PORT": "0"}); err != nil {
		t.Fatal(err)
	}
}

// TestRun_StageRefusesAMismatch: staging with a work queue setting that disagrees with the
// prefix writes nothing.
func TestRun_StageRefusesAMismatch(t *testing.T) {
	out := t.TempDir()
	err := launch.Run(t.Context(), durableApp(nil), launch.Options{Args: []string{"stage", "--out", out},
		Getenv: envOf(map[string]string{"FUNCGRAPH_WORK_QUEUE": "x-work"}), Logger: discard()})
	if err == nil || !strings.Contains(err.Error(), `"x-work"`) {
		t.Fatalf("err = %v, want the mismatch", err)
	}
}
