package host

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// Items 3 and 5 on the hosting routes: a malformed chunked body is a 400 with a clear detail
// (not "Internal server error"), and a chunked body over the cap stops at the cap with a correct
// message. Chunked bodies reach only the standalone server (the host drops them).
func TestInvoke_BrokenAndOversizedChunkedBodies(t *testing.T) {
	app := testApp(t, Options{MaxRequestBodyBytes: 1024}, map[string]InvocableGraph{"g": &fakeInvoker{}}, nil)
	tr := funchosttest.Transports(t, app.FunctionApp())[0]
	send := func(chunks string) (int, string) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(tr.BaseURL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go func() {
			fmt.Fprintf(conn, "POST /api/graphs/g/invoke HTTP/1.1\r\nHost: x\r\nx-functions-key: %s\r\nTransfer-Encoding: chunked\r\n\r\n%s", tr.FunctionKey, chunks)
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
	if status, body := send("3\r\n{}{\r\nzz\r\n"); status != 400 || body != errBody("Malformed request body: invalid chunked encoding") {
		t.Errorf("malformed chunked: %d %s", status, body)
	}
	big := strings.Repeat("a", 4096)
	if status, body := send(fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(big), big)); status != 400 ||
		body != errBody("Request body too large: more than 1024 bytes (max 1024 bytes)") {
		t.Errorf("chunked over the cap: %d %s", status, body)
	}
}
