package isolation_test

import (
	"errors"
	"net/http/httptest"
	"net/netip"
	"testing"

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
