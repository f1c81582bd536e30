package funchost_test

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// The load-and-abuse test: the bad requests of items 1–5 sent concurrently with normal traffic,
// on both transports. Every normal request must succeed and every bad one get its 4xx. The
// mix is drawn from a seeded generator, so a failure reproduces; the run is bounded by count,
// not time.
func TestEdge_LoadAndAbuse(t *testing.T) {
	const workers, perWorker = 8, 25
	for _, tr := range funchosttest.Transports(t, edgeApp(t)) {
		t.Run(tr.Name, func(t *testing.T) {
			emulated := tr.Name == funchosttest.TransportEmulatedHost
			type abuse struct {
				name   string
				status int
				send   func(t *testing.T) int
			}
			raw := func(head string, body func(io.Writer)) func(t *testing.T) int {
				return func(t *testing.T) int {
					conn := dial(t, tr.BaseURL)
					defer conn.Close()
					_, _ = io.WriteString(conn, head)
					if body != nil {
						body(conn)
					}
					return readResponse(t, conn, bufio.NewReader(conn)).status
				}
			}
			bigBody := strings.Repeat("z", routeCap+1)
			abuses := []abuse{
				{"expect-continue unknown route", 404, raw("POST /api/nowhere HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 9999\r\n\r\n", nil)},
				{"expect-continue no key", 401, raw("POST /api/keyed HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 9999\r\n\r\n", nil)},
				{"over the server cap", 413, raw(fmt.Sprintf("POST /api/capped HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", funchost.DefaultMaxRequestBodyBytes+1), nil)},
				{"unread body, connection close", 401, raw(fmt.Sprintf("POST /api/keyed HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n", len(bigBody)),
					func(w io.Writer) { _, _ = io.WriteString(w, bigBody) })},
			}
			if !emulated { // the host drops chunked bodies, so these reach only the standalone server
				abuses = append(abuses,
					abuse{"malformed chunked", 400, raw("POST /api/capped HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", nil)},
					abuse{"chunked over the cap", 413, raw("POST /api/capped HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
						func(w io.Writer) { _, _ = fmt.Fprintf(w, "%x\r\n%s\r\n0\r\n\r\n", len(bigBody), bigBody) })},
					abuse{"over the route cap", 413, raw(fmt.Sprintf("POST /api/capped HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: %d\r\n\r\n", len(bigBody)),
						func(w io.Writer) { _, _ = io.WriteString(w, bigBody) })},
				)
			}
			normal := func(t *testing.T, i int) error {
				body := strings.Repeat("n", i%500)
				req, err := http.NewRequestWithContext(t.Context(), "POST", tr.BaseURL+"/api/keyed", strings.NewReader(body))
				if err != nil {
					return err
				}
				req.Header.Set("x-functions-key", tr.FunctionKey)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				got, _ := io.ReadAll(resp.Body)
				if want := fmt.Sprintf("read %d", len(body)); resp.StatusCode != 200 || string(got) != want {
					return fmt.Errorf("normal request: %d %q, want 200 %q", resp.StatusCode, got, want)
				}
				return nil
			}
			var wg sync.WaitGroup
			errs := make(chan error, workers*perWorker)
			for w := range workers {
				rng := rand.New(rand.NewPCG(uint64(w), 12))
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range perWorker {
						if w%2 == 0 { // half the workers send normal traffic only
							if err := normal(t, i); err != nil {
								errs <- err
							}
							continue
						}
						a := abuses[rng.IntN(len(abuses))]
						if got := a.send(t); got != a.status {
							errs <- fmt.Errorf("%s: status %d, want %d", a.name, got, a.status)
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}
