package azstorage

import (
	"errors"
	"fmt"
	"strings"
)

// Development storage (Azurite) defaults for "UseDevelopmentStorage=true". The key is the
// public, well-known emulator key, not a secret.
const (
	devAccountName = "devstoreaccount1"
	devAccountKey  = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	devHost        = "http://127.0.0.1"
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
		host := devHost
		if p := keys["developmentstorageproxyuri"]; p != "" {
			host = strings.TrimRight(p, "/")
		}
		raw := fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;"+
			"BlobEndpoint=%s:10000/%s;QueueEndpoint=%s:10001/%s;TableEndpoint=%s:10002/%s;",
			devAccountName, devAccountKey, host, devAccountName, host, devAccountName, host, devAccountName)
		return parseConnectionString(raw)
	}
	if keys["accountname"] == "" {
		return connString{}, errors.New("storage connection string: AccountName is missing")
	}
	if keys["accountkey"] == "" && keys["sharedaccesssignature"] == "" {
		return connString{}, errors.New("storage connection string: neither AccountKey nor SharedAccessSignature is set")
	}
	return connString{raw: cs, keys: keys}, nil
}
