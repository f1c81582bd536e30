package azure

import (
	"errors"

	"github.com/funcgraph/funcgraph/pkg/internal/connstr"
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
	keys, err := connstr.Parse(cs)
	if err != nil {
		return connString{}, err
	}
	if dev, ok := connstr.Expand(cs, keys); ok {
		return parseConnectionString(dev)
	}
	if keys["accountname"] == "" {
		return connString{}, errors.New("storage connection string: AccountName is missing")
	}
	if keys["accountkey"] == "" && keys["sharedaccesssignature"] == "" {
		return connString{}, errors.New("storage connection string: neither AccountKey nor SharedAccessSignature is set")
	}
	return connString{raw: cs, keys: keys}, nil
}
