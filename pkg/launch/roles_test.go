package launch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/funcgraph/funcgraph/pkg/azure"
)

// noTableRole answers as a storage account whose identity has the queue and blob roles but
// not the table one: creating a table is refused 403 AuthorizationPermissionMismatch.
type noTableRole struct{}

func (noTableRole) Do(req *http.Request) (*http.Response, error) {
	status, code := http.StatusCreated, ""
	if strings.Contains(req.URL.Host, ".table.") {
		status, code = http.StatusForbidden, "AuthorizationPermissionMismatch"
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if code != "" {
		h.Set("X-Ms-Error-Code", code)
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(`{}`)), Request: req}, nil
}

type testToken struct{}

func (testToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "t", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// TestFromEnv_IdentityWithoutTableRole_NamesTheRole: the startup error of an app whose
// identity lacks a role says which role on which service, through FromEnv as the binary
// reports it. Not parallel: it sets azureOptions.
func TestFromEnv_IdentityWithoutTableRole_NamesTheRole(t *testing.T) {
	azureOptions = &azure.Options{Credential: testToken{}, ClientOptions: azcore.ClientOptions{
		Transport: noTableRole{}, Retry: policy.RetryOptions{MaxRetries: -1}}}
	t.Cleanup(func() { azureOptions = nil })
	getenv := func(k string) string {
		switch k {
		case EnvStorage + "__accountName":
			return "acct1"
		case EnvStorage + "__credential":
			return azure.CredentialManagedIdentity
		}
		return ""
	}
	_, err := FromEnv(t.Context(), getenv, ModeServe, nil)
	want := `durable storage: create table funcgraphruns: the app's identity lacks the "Storage Table Data Contributor" role ` +
		`on the storage account (the table service answered 403 AuthorizationPermissionMismatch)`
	var mr *azure.MissingRoleError
	if err == nil || err.Error() != want || !errors.As(err, &mr) {
		t.Fatalf("FromEnv: %v\nwant %s", err, want)
	}
}
