package launch

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRootLocalSettings_DevelopmentOnly: the repository's local.settings.json, which `stage
// --target local` starts from, parses as Core Tools reads it and holds exactly the local
// development settings the app needs, with the names and values the app uses, and nothing
// that looks like a secret.
func TestRootLocalSettings_DevelopmentOnly(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", rootSettingsFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("not a JSON object: %v", err)
	}
	if got := strings.Join(slices.Sorted(maps.Keys(doc)), ","); got != "IsEncrypted,Values" {
		t.Errorf("members %s, want IsEncrypted and Values only", got)
	}
	var f struct {
		IsEncrypted *bool
		Values      map[string]string
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("Core Tools would not read it: %v", err)
	}
	if f.IsEncrypted == nil || *f.IsEncrypted {
		t.Errorf("IsEncrypted = %v, want false", f.IsEncrypted)
	}
	names, err := namesFor("")
	if err != nil {
		t.Fatal(err)
	}
	// The example app's own setting besides launch's: its tickets queue (exampleapp.EnvTicketsQueue,
	// which the staged tickets_triage function.json reads).
	want := map[string]string{envWorkerRuntime: "custom", EnvStorage: developmentStorage, envWorkQueue: names.WorkQueue,
		"FUNCGRAPH_TICKETS_QUEUE": "funcgraph-tickets"}
	if !maps.Equal(f.Values, want) {
		t.Errorf("Values = %v, want exactly %v", f.Values, want)
	}
	for k, v := range f.Values {
		if secretLooking(k, v) {
			t.Errorf("%s=%q looks like a secret: the committed file holds development settings only", k, v)
		}
	}
}

// secretLooking reports a setting whose name or value reads like a credential.
func secretLooking(name, value string) bool {
	n, v := strings.ToUpper(name), strings.ToLower(value)
	for _, w := range []string{"KEY", "SECRET", "PASSWORD", "TOKEN", "CREDENTIAL"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, w := range []string{"accountkey=", "sharedaccesssignature=", "sig=", "password=", "secret", "clientsecret"} {
		if strings.Contains(v, w) {
			return true
		}
	}
	return false
}

// TestSecretLooking: the check catches the credentials a local.settings.json could carry.
func TestSecretLooking(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		want        bool
	}{
		{"AzureWebJobsStorage", "UseDevelopmentStorage=true", false},
		{"FUNCGRAPH_WORK_QUEUE", "funcgraph-work", false},
		{"AzureWebJobsStorage", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc==", true},
		{"AzureWebJobsStorage", "BlobEndpoint=https://a.blob.core.windows.net;SharedAccessSignature=sv=1&sig=x", true},
		{"OPENAI_API_KEY", "sk-1", true},
		{"FUNCGRAPH_FUNCTION_KEY", "dev", true},
	} {
		if got := secretLooking(tt.name, tt.value); got != tt.want {
			t.Errorf("secretLooking(%s, %s) = %v, want %v", tt.name, tt.value, got, tt.want)
		}
	}
}
