package launch

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/respbudget"
)

func TestResponseBudgetFromEnv_DefaultsAndSettings(t *testing.T) {
	t.Parallel()
	defaults := respbudget.Limits{BytesPerResponse: 32 << 20, BytesPerIdentity: 64 << 20, BytesTotal: 256 << 20, StreamsPerIdentity: 32, StreamsTotal: 512}
	tests := []struct {
		name    string
		env     map[string]string
		want    func(l *respbudget.Limits)
		wantErr string
	}{
		{name: "default"},
		{name: "every bound set", env: map[string]string{envResponseBudget: "1GiB", envResponseBudgetPerIdentity: " 128MiB ",
			envResponseMaxBytes: "16777216", envMaxStreams: "1000", envMaxStreamsPerIdentity: "10"},
			want: func(l *respbudget.Limits) {
				*l = respbudget.Limits{BytesPerResponse: 16 << 20, BytesPerIdentity: 128 << 20, BytesTotal: 1 << 30, StreamsPerIdentity: 10, StreamsTotal: 1000}
			}},
		{name: "a small total lowers the unset bounds below it", env: map[string]string{envResponseBudget: "16MiB", envMaxStreams: "8"},
			want: func(l *respbudget.Limits) {
				*l = respbudget.Limits{BytesPerResponse: 16 << 20, BytesPerIdentity: 16 << 20, BytesTotal: 16 << 20, StreamsPerIdentity: 8, StreamsTotal: 8}
			}},
		{name: "total not a size", env: map[string]string{envResponseBudget: "lots"}, wantErr: envResponseBudget},
		{name: "total too small", env: map[string]string{envResponseBudget: "512KiB"}, wantErr: envResponseBudget},
		{name: "share past total", env: map[string]string{envResponseBudget: "32MiB", envResponseBudgetPerIdentity: "33MiB"}, wantErr: envResponseBudgetPerIdentity},
		{name: "one answer past the share", env: map[string]string{envResponseMaxBytes: "65MiB"}, wantErr: envResponseMaxBytes},
		{name: "one answer zero", env: map[string]string{envResponseMaxBytes: "0"}, wantErr: envResponseMaxBytes},
		{name: "streams not a number", env: map[string]string{envMaxStreams: "many"}, wantErr: envMaxStreams},
		{name: "streams zero", env: map[string]string{envMaxStreams: "0"}, wantErr: envMaxStreams},
		{name: "streams per identity past the total", env: map[string]string{envMaxStreams: "4", envMaxStreamsPerIdentity: "5"}, wantErr: envMaxStreamsPerIdentity},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := responseBudgetFromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr+": ") {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			want := defaults
			if tc.want != nil {
				tc.want(&want)
			}
			want.LoadsPerIdentity, want.LoadsTotal = respbudget.DefaultLoadsPerIdentity, respbudget.DefaultLoadsTotal
			if err != nil || b.Limits() != want {
				t.Fatalf("limits = %+v, %v; want %+v", b.Limits(), err, want)
			}
		})
	}
	if _, err := FromEnv(t.Context(), func(k string) string { return map[string]string{envMaxStreams: "0"}[k] }, ModeServe, funchosttest.TestLogger(t)); err == nil {
		t.Fatalf("FromEnv with %s=0 started, want a startup error", envMaxStreams)
	}
}

// Assemble gives the hosting routes, the platform routes and the runs API the settings' one
// response budget: with alice's share held (as her slow readers on any surface would hold
// it), her next request on each surface is answered 429 before anything is loaded or run,
// while bob's is served.
func TestAssemble_OneResponseBudgetForEveryRoute(t *testing.T) {
	s, err := FromEnv(t.Context(), func(k string) string {
		return map[string]string{envUserIsolation: "on", envIdentityHeader: "X-User", envTrustedProxies: "192.0.2.0/24",
			envResponseBudgetPerIdentity: "2MiB"}[k]
	}, ModeServe, funchosttest.TestLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	graphs, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	a, err := Assemble(s, Spec{Platform: true, Durable: graphs, Hosted: []Hosted{{Name: "chat", Graph: checkpointedEcho{}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	held, err := s.ResponseBudget.Hold("alice", 2<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	h := a.Host.FunctionApp().Standalone(funchost.StandaloneOptions{Keys: funchost.Keys{HostFunction: map[string]string{"default": "k"}}})
	send := func(who, method, path, body string) (int, string) {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("x-functions-key", "k")
		r.Header.Set("X-User", who)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/graphs/chat/invoke", `{"input":{"m":"hi"},"config":{"configurable":{"thread_id":"t-%s"}}}`},
		{"POST", "/api/threads/search", `{}`},
		{"GET", "/api/runs", ""},
	} {
		for _, who := range []string{"alice", "bob"} {
			code, body := send(who, c.method, c.path, strings.Replace(c.body, "%s", who, 1))
			if refused := code == http.StatusTooManyRequests; refused != (who == "alice") || code >= 300 && who == "bob" {
				t.Errorf("%s %s as %s while alice's share is held: %d %.200s", c.method, c.path, who, code, body)
			}
		}
	}
}
