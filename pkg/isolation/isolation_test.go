package isolation_test

import (
	"errors"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/isolation"
)

func TestConfig_Validate(t *testing.T) {
	p := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for name, tc := range map[string]struct {
		cfg isolation.Config
		ok  bool
	}{
		"zero: host only":        {isolation.Config{}, true},
		"header and proxies":     {isolation.Config{IdentityHeader: "X-User", TrustedProxies: p}, true},
		"header without proxy":   {isolation.Config{IdentityHeader: "X-User"}, false},
		"proxies without header": {isolation.Config{TrustedProxies: p}, false},
		"not a header name":      {isolation.Config{IdentityHeader: "X User", TrustedProxies: p}, false},
	} {
		if err := tc.cfg.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v, want ok %v", name, err, tc.ok)
		}
	}
}

func TestParseProxies(t *testing.T) {
	got, err := isolation.ParseProxies(" 10.0.0.0/8, 192.0.2.7 ,::1,")
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("::1/128")}
	if err != nil || len(got) != len(want) {
		t.Fatalf("ParseProxies = %v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("proxy %d = %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := isolation.ParseProxies("10.0.0.0/33"); err == nil {
		t.Error("a bad prefix parsed")
	}
}

// TestIsolation_Caller_Standalone covers the header path (a request that did not come
// through the Functions host): trusted peers only, no identity is ErrNoIdentity.
func TestIsolation_Caller_Standalone(t *testing.T) {
	iso, err := isolation.New(isolation.Config{IdentityHeader: "x-user", TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		peer, user string
		want       string
		err        error
	}{
		"trusted proxy":          {"10.1.2.3:5000", "alice", "alice", nil},
		"trusted, mapped v6":     {"[::ffff:10.1.2.3]:5000", "alice", "alice", nil},
		"untrusted peer":         {"10.2.0.1:5000", "alice", "", isolation.ErrUntrustedIdentity},
		"untrusted, empty value": {"10.2.0.1:5000", " ", "", isolation.ErrUntrustedIdentity},
		"no header":              {"10.2.0.1:5000", "", "", isolation.ErrNoIdentity},
		"trusted, empty":         {"10.1.2.3:5000", " ", "", isolation.ErrNoIdentity},
		// Only the ASCII spaces and tabs around a value go; nothing else is trimmed or folded.
		"spaces and tabs around": {"10.1.2.3:5000", " \talice \t", "alice", nil},
		"inner space kept":       {"10.1.2.3:5000", "alice smith", "alice smith", nil},
		"no-break space":         {"10.1.2.3:5000", "alice\u00a0", "", isolation.ErrInvalidIdentity},
		"ideographic space":      {"10.1.2.3:5000", "\u3000alice", "", isolation.ErrInvalidIdentity},
		"inner tab":              {"10.1.2.3:5000", "al\tice", "", isolation.ErrInvalidIdentity},
		"over the size cap":      {"10.1.2.3:5000", strings.Repeat("a", isolation.MaxIdentityBytes+1), "", isolation.ErrInvalidIdentity},
	} {
		r := httptest.NewRequest("GET", "/api/threads", nil)
		r.RemoteAddr = tc.peer
		if tc.user != "" {
			r.Header.Set("X-User", tc.user)
		}
		c, err := iso.Caller(r)
		if !errors.Is(err, tc.err) || c.ID != tc.want || c.Admin {
			t.Errorf("%s: Caller = %+v, %v; want %q, %v", name, c, err, tc.want, tc.err)
		}
	}
}

func TestCaller_Owns(t *testing.T) {
	alice := isolation.Caller{ID: "alice"}
	for _, tc := range []struct {
		c     isolation.Caller
		owner any
		want  bool
	}{
		{alice, "alice", true},
		{alice, "bob", false},
		{alice, nil, false},
		{alice, 1.0, false},
		{isolation.Caller{}, "", false},
		{isolation.Caller{Admin: true}, "bob", true},
		{isolation.Caller{Admin: true}, nil, true},
	} {
		if got := tc.c.Owns(tc.owner); got != tc.want {
			t.Errorf("%+v.Owns(%v) = %v, want %v", tc.c, tc.owner, got, tc.want)
		}
	}
}

func TestValidIdentity(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"alice", true},
		{"alice smith", true},
		{"aad:3f2504e0-4f89-11d3-9a0c-0305e82c3301", true},
		{"zoë@example.com", true},
		{strings.Repeat("a", isolation.MaxIdentityBytes), true},
		{strings.Repeat("a", isolation.MaxIdentityBytes+1), false},
		{"alice\u00a0", false}, // no-break space
		{"alice\u2028", false}, // line separator
		{"alice\u0085", false}, // next line
		{"\u3000alice", false}, // ideographic space
		{"ali\tce", false},
		{"alice\r\n", false},
		{"alice\x00", false},
		{"alice\x7f", false},
		{"alice\u009b", false}, // a C1 control
		{"alice\xff", false},   // not UTF-8
	} {
		if got := isolation.ValidIdentity(tc.id); got != tc.want {
			t.Errorf("ValidIdentity(%q) = %v, want %v", tc.id, got, tc.want)
		}
	}
}

// The refusal's text states the size cap; it is written where the isolation package cannot
// be imported.
func TestInvalidIdentityMessage_StatesTheCap(t *testing.T) {
	if !strings.Contains(apierror.InvalidIdentityMessage, strconv.Itoa(isolation.MaxIdentityBytes)+" bytes") {
		t.Errorf("%q does not state MaxIdentityBytes (%d)", apierror.InvalidIdentityMessage, isolation.MaxIdentityBytes)
	}
	if apierror.Status(isolation.ErrInvalidIdentity) != 400 || apierror.Status(isolation.ErrNoIdentity) != 401 || apierror.Status(isolation.ErrUntrustedIdentity) != 403 {
		t.Error("an isolation error is not a case of its kind")
	}
}

// FuzzIsolation_Caller_IdentityIsExact: whatever a trusted proxy sends, the caller is either
// refused or is the value exactly, less the ASCII spaces and tabs around it.
func FuzzIsolation_Caller_IdentityIsExact(f *testing.F) {
	for _, s := range []string{"alice", " alice\t", "alice\u00a0", "\u3000alice", "a b", "\xff", ""} {
		f.Add(s)
	}
	iso, err := isolation.New(isolation.Config{IdentityHeader: "X-User", TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r := httptest.NewRequest("GET", "/api/threads", nil)
		r.RemoteAddr = "10.0.0.1:5000"
		r.Header["X-User"] = []string{v}
		c, err := iso.Caller(r)
		if err != nil {
			return
		}
		if want := strings.Trim(v, " \t"); c.ID != want || !isolation.ValidIdentity(c.ID) {
			t.Fatalf("Caller(%q) = %q, want %q as sent", v, c.ID, want)
		}
	})
}
