//go:build integration

package exampleapp_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/isolation"
	"github.com/funcgraph/funcgraph/pkg/runsapi/runsapitest"
)

// TestIntegrationIsolation_ScopedListings_BothTransports: on Azure storage, with per-user
// isolation on (the standalone server believing the principal header from loopback), an
// identity lists its own runs only, from its owner partitions of the run index: no runs and
// no token to one without any, exactly their own to the owner, page by page, and tokens
// signed with the key the table holds (runsapitest.CheckScopedListings).
func TestIntegrationIsolation_ScopedListings_BothTransports(t *testing.T) {
	trs := azureAppWith(t, map[string]string{
		"FUNCGRAPH_USER_ISOLATION":  "on",
		"FUNCGRAPH_IDENTITY_HEADER": isolation.PrincipalIDHeader,
		"FUNCGRAPH_TRUSTED_PROXIES": "127.0.0.1",
	})
	for _, tr := range trs {
		t.Run(tr.Name, func(t *testing.T) { runsapitest.CheckScopedListings(t, tr, asIdentity(tr)) })
	}
}
