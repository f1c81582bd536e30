package bloblock

import (
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/azure"
)

func TestOpen_BadInput_ErrorsWithoutSecrets(t *testing.T) {
	const key = "c2VjcmV0LWtleS12YWx1ZQ=="
	clients, err := azure.NewClients(azure.Settings{ConnectionString: "AccountName=acct;AccountKey=" + key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		clients   *azure.Clients
		container string
		want      string
	}{
		{"no clients", nil, "funcgraph-locks", "no storage clients"},
		{"bad container", clients, "Bad_Name", "invalid container name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(t.Context(), tt.clients, tt.container, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open = %v, want error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("error leaks the account key: %v", err)
			}
		})
	}
}
