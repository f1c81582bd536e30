package azure

import (
	"errors"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/azure/internal/azsdk"
)

// connString is a parsed connection string, with the development form expanded.
type connString struct {
	raw  string // the connection string handed to the SDKs
	keys map[string]string
}

// parseConnectionString checks the key=value form and expands "UseDevelopmentStorage=true"
// (optionally with DevelopmentStorageProxyUri) to the explicit Azurite account. Errors
// describe the format, never the value.
func parseConnectionString(cs string) (connString, error) {
	keys := map[string]string{}
	for _, part := range strings.Split(strings.TrimSpace(cs), ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return connString{}, errors.New("storage connection string: every part must be key=value")
		}
		keys[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if strings.EqualFold(keys["usedevelopmentstorage"], "true") {
		return parseConnectionString(azsdk.DevelopmentStorage(strings.TrimRight(keys["developmentstorageproxyuri"], "/")))
	}
	if keys["accountname"] == "" {
		return connString{}, errors.New("storage connection string: AccountName is missing")
	}
	if keys["accountkey"] == "" && keys["sharedaccesssignature"] == "" {
		return connString{}, errors.New("storage connection string: neither AccountKey nor SharedAccessSignature is set")
	}
	return connString{raw: cs, keys: keys}, nil
}
