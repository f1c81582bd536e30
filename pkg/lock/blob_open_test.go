package lock

import (
	"strings"
	"testing"
)

func TestExpandDevelopmentStorage_Forms(t *testing.T) {
	tests := []struct {
		name, in, wantBlob string
	}{
		{"dev storage", "UseDevelopmentStorage=true", "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"},
		{"dev storage any case", "usedevelopmentstorage=TRUE;", "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"},
		{"proxy", "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://ipv4.fiddler/", "BlobEndpoint=http://ipv4.fiddler:10000/devstoreaccount1;"},
		{"explicit unchanged", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=k", "AccountName=a;AccountKey=k"},
		{"false unchanged", "UseDevelopmentStorage=false", "UseDevelopmentStorage=false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := expandDevelopmentStorage(tt.in); !strings.Contains(got, tt.wantBlob) {
				t.Errorf("expandDevelopmentStorage(%q) = %q, want it to contain %q", tt.in, got, tt.wantBlob)
			}
		})
	}
}

func TestValidContainerName_Rules(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"funcgraph-locks", true}, {"abc", true}, {strings.Repeat("a", 63), true},
		{"ab", false}, {strings.Repeat("a", 64), false}, {"Locks", false}, {"-abc", false},
		{"abc-", false}, {"a--b", false}, {"a_b", false}, {"", false},
	}
	for _, tt := range tests {
		if err := validContainerName(tt.name); (err == nil) != tt.ok {
			t.Errorf("validContainerName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

func TestOpenBlobLease_BadInput_ErrorsWithoutSecrets(t *testing.T) {
	const key = "c2VjcmV0LWtleS12YWx1ZQ=="
	tests := []struct {
		name, cs, container, want string
	}{
		{"empty connection", "", "funcgraph-locks", "connection string is empty"},
		{"bad container", "UseDevelopmentStorage=true", "Bad_Name", "invalid container name"},
		{"unparsable", "AccountKey=" + key + ";garbage", "funcgraph-locks", "parse storage connection string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OpenBlobLease(t.Context(), tt.cs, tt.container, BlobLeaseOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("OpenBlobLease = %v, want error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("error leaks the account key: %v", err)
			}
		})
	}
}
