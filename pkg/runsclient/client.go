package runsclient

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// keyHeader carries the function key on every request.
const keyHeader = "x-functions-key"

// DefaultRoutePrefix is the path New gives a base URL that has none: the Functions host's
// default route prefix.
const DefaultRoutePrefix = "/api"

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// maxAnswerBody bounds how much of a success answer is read (the app's own bound on one
// answer is 32 MiB).
const maxAnswerBody = 64 << 20

// Retry bounds how the client sends a request again. The zero value means the defaults.
type Retry struct {
	// MaxAttempts is how many times a request is sent at most, the first included; 0 means
	// DefaultMaxAttempts, 1 never retries.
	MaxAttempts int
	// BaseDelay is the first back-off of an answer without Retry-After and of a transport
	// failure, doubled at each attempt; 0 means DefaultBaseDelay.
	BaseDelay time.Duration
	// MaxDelay caps one wait, a Retry-After included; 0 means DefaultMaxDelay.
	MaxDelay time.Duration
}

// Defaults of Retry.
const (
	DefaultMaxAttempts = 5
	DefaultBaseDelay   = 200 * time.Millisecond
	DefaultMaxDelay    = 30 * time.Second
)

func (r Retry) withDefaults() Retry {
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = DefaultMaxAttempts
	}
	if r.BaseDelay <= 0 {
		r.BaseDelay = DefaultBaseDelay
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = DefaultMaxDelay
	}
	return r
}

// backoff is the wait before attempt n+1 (n from 1) when the answer named none.
func (r Retry) backoff(n int) time.Duration {
	d := r.BaseDelay
	for i := 1; i < n && d < r.MaxDelay; i++ {
		d *= 2
	}
	return min(d, r.MaxDelay)
}

// Client calls the runs API of one app. Build it with New; it is safe for concurrent use.
type Client struct {
	base  *url.URL
	key   string
	hc    *http.Client
	retry Retry
	// sleep waits d or until ctx ends (tests replace it).
	sleep func(ctx context.Context, d time.Duration) error
	// newKey makes the Idempotency-Key of an event sent without one.
	newKey func() string
}

// Option configures New.
type Option func(*Client)

// WithFunctionKey sends key as the x-functions-key header of every request (the app's
// function key, or the master key). Without it requests carry no key, as for a run API
// mounted anonymous.
func WithFunctionKey(key string) Option { return func(c *Client) { c.key = key } }

// WithHTTPClient sends the requests through hc (its transport, proxy and TLS settings).
// Leave hc.Timeout zero: the feed holds a request open for up to the app's wait bound, and
// the context bounds every call. nil means http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithRetry sets how requests are sent again (Retry's zero fields keep their defaults).
func WithRetry(r Retry) Option { return func(c *Client) { c.retry = r } }

// New returns a client of the runs API at baseURL: the app's address with its route prefix
// ("https://my-app.azurewebsites.net/api"; an address without a path gets DefaultRoutePrefix).
// It reports a base URL that is not absolute http(s), or that carries a query or fragment.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return nil, fmt.Errorf("runsclient: base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("runsclient: base URL %q: want an absolute http or https URL", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("runsclient: base URL %q: want no query, fragment or user info (give the key with WithFunctionKey)", u.Scheme+"://"+u.Host+u.Path)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if u.Path == "" {
		u.Path = DefaultRoutePrefix
	}
	u.RawPath = ""
	c := &Client{base: u, hc: http.DefaultClient, sleep: sleepContext, newKey: randomKey}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		c.hc = http.DefaultClient
	}
	c.retry = c.retry.withDefaults()
	return c, nil
}

// BaseURL returns the base URL requests are sent under.
func (c *Client) BaseURL() string { return c.base.String() }

// sleepContext waits d, or returns ctx's error when it ends first.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// randomKey is 16 random bytes in hex.
func randomKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// request is one call: what to send, and whether a transport failure may send it again.
type request struct {
	method string
	// path is below the base URL, each segment escaped already (see seg).
	path   string
	query  url.Values
	body   []byte // nil: no body
	header http.Header
	// resend: sending it twice cannot do twice what it asks (a read, an event with an
	// Idempotency-Key), so a transport failure retries it.
	resend bool
}

// seg escapes one path segment (an instance id, a graph or an event name).
func seg(s string) string { return url.PathEscape(s) }

// url is the request's URL.
func (c *Client) url(r *request) string {
	u := *c.base
	raw := c.base.EscapedPath() + r.path
	u.Path, _ = url.PathUnescape(raw) // each segment was escaped (seg)
	u.RawPath = raw
	if len(r.query) > 0 {
		u.RawQuery = r.query.Encode()
	}
	return u.String()
}

// send sends r, retrying 429 and 503 answers after their Retry-After and, when r.resend,
// transport failures and 502 and 504 answers (a gateway's), at most Retry.MaxAttempts times. It returns the first answer that is
// neither (its body open, for the caller to close), or the last error: a *Error for an
// answer, the transport's failure wrapped otherwise. Success statuses are the caller's to
// check (decode does).
func (c *Client) send(ctx context.Context, r *request) (*http.Response, error) {
	target := c.url(r)
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, r.method, target, bodyReader(r.body))
		if err != nil {
			return nil, fmt.Errorf("runsclient: %s %s: %w", r.method, r.logPath(c), err)
		}
		for k, v := range r.header {
			req.Header[k] = v
		}
		if r.body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if req.Header.Get("Accept") == "" {
			req.Header.Set("Accept", "application/json")
		}
		if c.key != "" {
			req.Header.Set(keyHeader, c.key)
		}
		res, err := c.hc.Do(req)
		var wait time.Duration
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, fmt.Errorf("runsclient: %s %s: %w", r.method, r.logPath(c), ctx.Err())
			}
			unsent := notSent(err)
			err = fmt.Errorf("runsclient: %s %s: %w", r.method, r.logPath(c), transportError(err))
			if !(r.resend || unsent) || attempt >= c.retry.MaxAttempts {
				if !r.resend && !unsent {
					err = &UnknownOutcomeError{Method: r.method, Path: r.logPath(c), Err: err}
				}
				return nil, err
			}
			wait = c.retry.backoff(attempt)
		case res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable:
			apiErr := readError(res, r.method, r.logPath(c))
			if attempt >= c.retry.MaxAttempts {
				return nil, apiErr
			}
			wait = apiErr.RetryAfter
			if wait <= 0 {
				wait = c.retry.backoff(attempt)
			}
			wait = min(wait, c.retry.MaxDelay)
		case r.resend && (res.StatusCode == http.StatusBadGateway || res.StatusCode == http.StatusGatewayTimeout) && attempt < c.retry.MaxAttempts:
			// A gateway in front of the app (the Azure front end, a proxy) lost its answer: a
			// read, or an event with its key, can be sent again.
			_ = readError(res, r.method, r.logPath(c))
			wait = c.retry.backoff(attempt)
		default:
			return res, nil
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("runsclient: %s %s: %w", r.method, r.logPath(c), err)
		}
	}
}

// logPath is the request's path for error texts: the full path, never the query (which the
// client never puts a key in, but a caller's filter values need not be echoed either).
func (r *request) logPath(c *Client) string { return c.base.Path + r.path }

// transportError unwraps the *url.Error of a failed request to its cause: its URL is the
// request's, and the text gives it again.
func transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// notSent reports a failure that happened before the request could reach the app (its
// connection was never made), so sending it again cannot do anything twice.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func bodyReader(b []byte) io.Reader {
	if b == nil {
		return nil
	}
	return bytes.NewReader(b)
}

// do sends r and decodes a success answer with status want (any 2xx when want is 0) into out
// (nil: discarded); any other answer is a *Error.
func (c *Client) do(ctx context.Context, r *request, want int, out any) (http.Header, error) {
	res, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if (want != 0 && res.StatusCode != want) || res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, readError(res, r.method, r.logPath(c))
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxAnswerBody))
		return res.Header, nil
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBody))
	if err != nil {
		return nil, fmt.Errorf("runsclient: %s %s: read answer: %w", r.method, r.logPath(c), transportError(err))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("runsclient: %s %s: decode answer (%d): %w", r.method, r.logPath(c), res.StatusCode, err)
	}
	return res.Header, nil
}

// jsonBody encodes v as a request body.
func jsonBody(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("runsclient: encode request body: %w", err)
	}
	return b, nil
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP date (0 when absent
// or unreadable, or a date that has passed).
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 || n > 1e6 {
			return 0
		}
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
