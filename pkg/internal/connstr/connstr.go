package connstr

import (
	"errors"
	"fmt"
	"strings"
)

// Development storage (Azurite) for "UseDevelopmentStorage=true". The key is the public,
// well-known emulator key, not a secret.
const (
	// devAccountName is the emulator's account.
	devAccountName = "devstoreaccount1"
	devAccountKey  = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	// devHost is where the emulator listens unless DevelopmentStorageProxyUri says otherwise.
	devHost = "http://127.0.0.1"
)

// developmentStorage returns the explicit connection string that "UseDevelopmentStorage=true"
// stands for: the emulator's account and key, with its blob, queue and table endpoints on
// their default ports (10000, 10001, 10002) of host (scheme and host, no trailing slash;
// DevHost when "").
func developmentStorage(host string) string {
	if host == "" {
		host = devHost
	}
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;"+
		"BlobEndpoint=%s:10000/%s;QueueEndpoint=%s:10001/%s;TableEndpoint=%s:10002/%s;",
		devAccountName, devAccountKey, host, devAccountName, host, devAccountName, host, devAccountName)
}

// Parse checks the key=value form of cs and returns its keys, lower-cased, with their trimmed
// values. Errors describe the format, never the value.
func Parse(cs string) (map[string]string, error) {
	keys := map[string]string{}
	for _, part := range strings.Split(strings.TrimSpace(cs), ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, errors.New("storage connection string: every part must be key=value")
		}
		keys[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	return keys, nil
}

// Expand returns cs, or the explicit connection string it stands for when it is the
// development form ("UseDevelopmentStorage=true"). keys are cs's keys (Parse).
func Expand(cs string, keys map[string]string) (string, bool) {
	if !strings.EqualFold(keys["usedevelopmentstorage"], "true") {
		return cs, false
	}
	return developmentStorage(strings.TrimRight(keys["developmentstorageproxyuri"], "/")), true
}
