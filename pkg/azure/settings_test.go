package azure

import (
	"strings"
	"testing"
)

const secretKey = "c2VjcmV0LWtleS1kby1ub3QtbGVhaw=="

func TestSettings_Validate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    Settings
		ok   bool
	}{
		{"connection string", Settings{ConnectionString: "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + secretKey + ";EndpointSuffix=core.windows.net"}, true},
		{"development storage", Settings{ConnectionString: "UseDevelopmentStorage=true"}, true},
		{"SAS", Settings{ConnectionString: "AccountName=acct;SharedAccessSignature=sv=2020&sig=" + secretKey}, true},
		{"account name", Settings{AccountName: "acct1"}, true},
		{"managed identity", Settings{AccountName: "acct1", Credential: "managedidentity", ClientID: "id"}, true},
		{"three service URIs", Settings{TableServiceURI: "https://a.table.core.windows.net", QueueServiceURI: "https://a.queue.core.windows.net", BlobServiceURI: "https://a.blob.core.windows.net"}, true},
		{"nothing", Settings{}, false},
		{"both forms", Settings{ConnectionString: "UseDevelopmentStorage=true", AccountName: "acct1"}, false},
		{"no key", Settings{ConnectionString: "AccountName=acct"}, false},
		{"not key=value", Settings{ConnectionString: "garbage" + secretKey}, false},
		{"one URI only", Settings{TableServiceURI: "https://a.table.core.windows.net"}, false},
		{"bad URI", Settings{AccountName: "acct1", BlobServiceURI: "ftp://x"}, false},
		{"bad account", Settings{AccountName: "Bad_Name"}, false},
		{"unknown credential", Settings{AccountName: "acct1", Credential: "password"}, false},
	}
	for _, tt := range tests {
		err := tt.s.Validate()
		if (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && strings.Contains(err.Error(), secretKey) {
			t.Errorf("%s: error leaks the key: %v", tt.name, err)
		}
	}
}

func TestSettingsFrom_ReadsIdentityVariants(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"Store__tableServiceUri": "https://t", "Store__queueServiceUri": "https://q", "Store__blobServiceUri": "https://b",
		"Store__credential": "managedidentity", "Store__clientId": " cid ", "AzureWebJobsStorage": "ignored",
	}
	s := SettingsFrom("Store", func(k string) string { return env[k] })
	want := Settings{TableServiceURI: "https://t", QueueServiceURI: "https://q", BlobServiceURI: "https://b", Credential: "managedidentity", ClientID: "cid"}
	if s != want {
		t.Fatalf("SettingsFrom = %+v, want %+v", s, want)
	}
	if !s.UsesIdentity() {
		t.Error("UsesIdentity = false")
	}
	if SettingsFrom("", func(string) string { return "" }).Configured() {
		t.Error("empty environment is configured")
	}
}

func TestNewClients_Endpoints(t *testing.T) {
	t.Parallel()
	dev, err := NewClients(Settings{ConnectionString: "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://10.0.0.5"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := dev.Blobs.URL(); got != "http://10.0.0.5:10000/devstoreaccount1/" {
		t.Errorf("dev blob URL = %s", got)
	}
	if got := dev.Queues.URL(); got != "http://10.0.0.5:10001/devstoreaccount1" {
		t.Errorf("dev queue URL = %s", got)
	}
	table, queue, blob := Settings{AccountName: "acct1", QueueServiceURI: "https://private.example/"}.endpoints()
	if table != "https://acct1.table.core.windows.net/" || queue != "https://private.example/" || blob != "https://acct1.blob.core.windows.net/" {
		t.Errorf("endpoints = %s %s %s", table, queue, blob)
	}
	if _, err := NewClients(Settings{AccountName: "acct1", Credential: "managedidentity"}, nil); err != nil {
		t.Errorf("managed identity clients: %v", err)
	}
}

func TestValidateNames(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"runs", "Runs2026", strings.Repeat("a", 63)} {
		if err := validateTableName(n); err != nil {
			t.Errorf("table %q: %v", n, err)
		}
	}
	for _, n := range []string{"ab", "1runs", "run-s", "tables", strings.Repeat("a", 64)} {
		if validateTableName(n) == nil {
			t.Errorf("table %q accepted", n)
		}
	}
	for _, n := range []string{"work", "funcgraph-work", "a1-b2"} {
		if err := validateQueueName(n); err != nil {
			t.Errorf("queue %q: %v", n, err)
		}
	}
	for _, n := range []string{"ab", "Work", "-work", "work-", "wo--rk", "wo_rk"} {
		if ValidateContainerName(n) == nil {
			t.Errorf("container %q accepted", n)
		}
	}
}

func FuzzParseConnectionString(f *testing.F) {
	f.Add("UseDevelopmentStorage=true")
	f.Add("AccountName=a;AccountKey=" + secretKey)
	f.Add(";;=;")
	f.Fuzz(func(t *testing.T, cs string) {
		if _, err := parseConnectionString(cs); err != nil && len(cs) > 8 && strings.Contains(err.Error(), cs) {
			t.Fatalf("error echoes the connection string: %v", err)
		}
	})
}

func TestParseConnectionString_DevelopmentStorageForms(t *testing.T) {
	tests := []struct {
		name, in, wantBlob string // wantBlob "": the string names no account and is refused
	}{
		{"dev storage", "UseDevelopmentStorage=true", "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"},
		{"dev storage any case", "usedevelopmentstorage=TRUE;", "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"},
		{"proxy", "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://ipv4.fiddler/", "BlobEndpoint=http://ipv4.fiddler:10000/devstoreaccount1;"},
		{"explicit unchanged", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=k", "AccountName=a;AccountKey=k"},
		{"false is not development storage", "UseDevelopmentStorage=false", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := parseConnectionString(tt.in)
			if tt.wantBlob == "" {
				if err == nil {
					t.Fatalf("parseConnectionString(%q) = %q, want an error", tt.in, cs.raw)
				}
				return
			}
			if err != nil || !strings.Contains(cs.raw, tt.wantBlob) {
				t.Errorf("parseConnectionString(%q) = %q, %v; want it to contain %q", tt.in, cs.raw, err, tt.wantBlob)
			}
		})
	}
}

func TestValidateContainerName_Rules(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"funcgraph-locks", true}, {"abc", true}, {strings.Repeat("a", 63), true},
		{"ab", false}, {strings.Repeat("a", 64), false}, {"Locks", false}, {"-abc", false},
		{"abc-", false}, {"a--b", false}, {"a_b", false}, {"", false},
	}
	for _, tt := range tests {
		if err := ValidateContainerName(tt.name); (err == nil) != tt.ok {
			t.Errorf("ValidateContainerName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}
