package isolation_test

import (
	"fmt"
	"net/http/httptest"
	"net/netip"

	"github.com/funcgraph/funcgraph/pkg/isolation"
)

// The standalone server behind an authenticating proxy at 10.0.0.5 that sets X-Forwarded-User.
func ExampleIsolation_Caller() {
	iso, err := isolation.New(isolation.Config{
		IdentityHeader: "X-Forwarded-User",
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.5/32")},
	})
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest("GET", "/api/threads/t1", nil)
	r.RemoteAddr = "10.0.0.5:41000"
	r.Header.Set("X-Forwarded-User", "alice@example.com")
	c, err := iso.Caller(r)
	fmt.Println(c.ID, err, c.Owns("alice@example.com"), c.Owns("bob@example.com"))

	r.RemoteAddr = "203.0.113.9:41000" // not the proxy: the header is a forgery
	_, err = iso.Caller(r)
	fmt.Println(err)
	// Output:
	// alice@example.com <nil> true false
	// isolation: identity header from an untrusted peer
}

func ExampleParseProxies() {
	p, err := isolation.ParseProxies("10.0.0.0/8, 192.0.2.7")
	fmt.Println(p, err)
	// Output: [10.0.0.0/8 192.0.2.7/32] <nil>
}

func ExampleNew() {
	// The zero Config: isolation under the Functions host only, where App Service
	// Authentication's X-MS-CLIENT-PRINCIPAL-ID is the identity.
	iso, err := isolation.New(isolation.Config{})
	fmt.Println(iso != nil, err)
	// Output: true <nil>
}
