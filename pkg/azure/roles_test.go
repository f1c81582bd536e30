package azure

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
)

// refusingTransport answers every request 403 with code, as a storage service answers an
// identity without the role (Azurite cannot emulate RBAC). It records the hosts asked.
type refusingTransport struct{ code string }

func (f refusingTransport) Do(req *http.Request) (*http.Response, error) {
	body := `<?xml version="1.0" encoding="utf-8"?><Error><Code>` + f.code + `</Code><Message>This request is not authorized to perform this operation using this permission. RequestId:secret-request-id</Message></Error>`
	ctype := "application/xml"
	if strings.Contains(req.URL.Host, ".table.") {
		body = `{"odata.error":{"code":"` + f.code + `","message":{"lang":"en-US","value":"This request is not authorized. RequestId:secret-request-id"}}}`
		ctype = "application/json"
	}
	h := http.Header{"Content-Type": {ctype}, "X-Ms-Error-Code": {f.code}}
	return &http.Response{StatusCode: http.StatusForbidden, Status: "403 Forbidden", Header: h,
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// staticToken is a credential that always has a token.
type staticToken struct{}

func (staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "secret-token", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func refusingClients(t *testing.T, s Settings, code string) *Clients {
	t.Helper()
	c, err := NewClients(s, &Options{Credential: staticToken{}, ClientOptions: azcore.ClientOptions{
		Transport: refusingTransport{code: code}, Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEnsure_IdentityRefused_NamesTheMissingRole: under identity-based settings, a 403
// AuthorizationPermissionMismatch or AuthorizationFailure when creating a table, queue or
// container is a *MissingRoleError naming the role and the service, with no URL, token or
// service message.
func TestEnsure_IdentityRefused_NamesTheMissingRole(t *testing.T) {
	t.Parallel()
	ensure := map[string]func(*Clients) error{
		"table": func(c *Clients) error { _, err := c.EnsureTable(t.Context(), "funcgraphruns"); return err },
		"queue": func(c *Clients) error { _, err := c.EnsureQueue(t.Context(), "funcgraph-work"); return err },
		"blob":  func(c *Clients) error { _, err := c.EnsureContainer(t.Context(), "funcgraph-payloads"); return err },
	}
	wantRole := map[string]string{"table": RoleTableDataContributor, "queue": RoleQueueDataContributor, "blob": RoleBlobDataOwner}
	wantPrefix := map[string]string{"table": "create table funcgraphruns: ", "queue": "create queue funcgraph-work: ", "blob": "create container funcgraph-payloads: "}
	for _, code := range []string{"AuthorizationPermissionMismatch", "AuthorizationFailure"} {
		c := refusingClients(t, Settings{AccountName: "acct1", Credential: CredentialManagedIdentity}, code)
		for service, fn := range ensure {
			err := fn(c)
			var mr *MissingRoleError
			if !errors.As(err, &mr) || mr.Service != service || mr.Role != wantRole[service] || mr.Status != 403 || mr.Code != code {
				t.Fatalf("%s %s: err = %v (%#v), want a MissingRoleError for %q", service, code, err, mr, wantRole[service])
			}
			want := wantPrefix[service] + `the app's identity lacks the "` + wantRole[service] + `" role on the storage account (the ` +
				service + " service answered 403 " + code + ")"
			if code == "AuthorizationFailure" {
				want += "; if it has the role, the account's network rules may refuse this client"
			}
			if err.Error() != want {
				t.Errorf("%s %s:\n got %s\nwant %s", service, code, err, want)
			}
			for _, leak := range []string{"https://", "core.windows.net", "secret"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("%s %s: error leaks %q: %v", service, code, leak, err)
				}
			}
		}
	}
}

// Other refusals stay plain service errors: a 403 that is not about permissions under
// identity-based settings, and any 403 with a connection string (a key or SAS has no role).
func TestEnsure_OtherRefusals_AreNotAboutRoles(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		s    Settings
		code string
	}{
		{"identity, bad token", Settings{AccountName: "acct1"}, "AuthenticationFailed"},
		{"connection string", Settings{ConnectionString: "DefaultEndpointsProtocol=https;AccountName=acct1;AccountKey=" + secretKey + ";EndpointSuffix=core.windows.net"}, "AuthorizationPermissionMismatch"},
	} {
		clients := refusingClients(t, c.s, c.code)
		_, err := clients.EnsureQueue(t.Context(), "funcgraph-work")
		var mr *MissingRoleError
		if err == nil || errors.As(err, &mr) {
			t.Fatalf("%s: err = %v, want a plain service error", c.name, err)
		}
		if want := "create queue funcgraph-work: queue service answered 403 " + c.code; err.Error() != want {
			t.Errorf("%s: err = %v, want %s", c.name, err, want)
		}
	}
}
