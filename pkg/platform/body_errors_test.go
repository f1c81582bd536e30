package platform

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// errorCounter is a slog.Handler that counts ERROR records (and drops everything).
type errorCounter struct{ n *atomic.Int64 }

func (h errorCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h errorCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.n.Add(1)
	}
	return nil
}
func (h errorCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h errorCounter) WithGroup(string) slog.Handler      { return h }

// bodyErrorApp is a platform app with a 1 KiB body cap whose ERROR log records are counted.
func bodyErrorApp(t *testing.T) (*funchost.FunctionApp, *atomic.Int64) {
	t.Helper()
	errs := &atomic.Int64{}
	app, err := host.New(host.Options{PlatformCompat: true, AuthLevel: funchost.AuthAnonymous, MaxRequestBodyBytes: 1024, Logger: slog.New(errorCounter{errs})})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Register(newMemGraph(), "chat", host.RegisterOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := Mount(app, Options{Threads: threads.NewMemory()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	return app.FunctionApp(), errs
}

// bodyRoutes are platform routes that read a body, one per reader.
var bodyRoutes = []string{"/api/threads", "/api/assistants/search", "/api/threads/t1/runs/wait", "/api/threads/t1/state", "/api/threads/search"}

// The platform routes answer a body they cannot read as the hosting routes do: 400 for a body
// over the cap or with broken chunking, 408 for one that does not arrive in time, each with the
// funchost message, never a logged 500.
func TestPlatform_BodyErrors_AnsweredLikeHostingRoutes(t *testing.T) {
	app, errs := bodyErrorApp(t)
	base := funchosttest.Serve(t, funchost.ServerConfig{BodyReadTimeout: 300 * time.Millisecond, ShutdownTimeout: time.Second},
		app.Standalone(funchost.StandaloneOptions{Logger: slog.New(slog.DiscardHandler)}))
	addr := strings.TrimPrefix(base, "http://")
	send := func(head, body string, pause time.Duration, rest string) (int, string) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go func() {
			_, _ = io.WriteString(conn, head+"\r\n"+body)
			if pause > 0 {
				time.Sleep(pause)
				_, _ = io.WriteString(conn, rest)
			}
		}()
		_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	big := strings.Repeat("a", 4096)
	for _, path := range bodyRoutes {
		chunked := "POST " + path + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
		for _, c := range []struct {
			name, head, body string
			pause            time.Duration
			status           int
			detail           string
		}{
			{"malformed chunking", chunked, "3\r\n{}{\r\nzz\r\n", 0, 400, "Malformed request body: invalid chunked encoding"},
			{"chunked over the cap", chunked, fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(big), big), 0, 400, "Request body too large: more than 1024 bytes (max 1024 bytes)"},
			{"declared over the cap", "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n", big[:2000], 0, 400, "Request body too large: 2000 bytes (max 1024 bytes)"},
			{"body too slow", "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n", "{", time.Second, 408, "Request body not received in time"},
		} {
			if status, body := send(c.head, c.body, c.pause, "}"); status != c.status || body != detail(c.detail) {
				t.Errorf("%s %s: %d %s, want %d %s", path, c.name, status, body, c.status, detail(c.detail))
			}
		}
	}
	if n := errs.Load(); n != 0 {
		t.Errorf("%d ERROR records logged for client body errors", n)
	}
}

// Through both transports, a body over the cap is the same 400 on every platform route.
func TestPlatform_BodyOverCap_SameOnBothTransports(t *testing.T) {
	app, errs := bodyErrorApp(t)
	for _, tr := range funchosttest.Transports(t, app) {
		t.Run(tr.Name, func(t *testing.T) {
			for _, path := range bodyRoutes {
				if r := do(t, tr, "POST", path, strings.Repeat(" ", 2000)); r.status != 400 || r.body != detail("Request body too large: 2000 bytes (max 1024 bytes)") {
					t.Errorf("%s: %d %s", path, r.status, r.body)
				}
			}
		})
	}
	if n := errs.Load(); n != 0 {
		t.Errorf("%d ERROR records logged for client body errors", n)
	}
}
