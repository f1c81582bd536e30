package azsdk

import "fmt"

// Development storage (Azurite) for "UseDevelopmentStorage=true". The key is the public,
// well-known emulator key, not a secret.
const (
	// DevAccountName is the emulator's account.
	DevAccountName = "devstoreaccount1"
	devAccountKey  = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	// DevHost is where the emulator listens unless DevelopmentStorageProxyUri says otherwise.
	DevHost = "http://127.0.0.1"
)

// DevelopmentStorage returns the explicit connection string that "UseDevelopmentStorage=true"
// stands for: the emulator's account and key, with its blob, queue and table endpoints on
// their default ports (10000, 10001, 10002) of host (scheme and host, no trailing slash;
// DevHost when "").
func DevelopmentStorage(host string) string {
	if host == "" {
		host = DevHost
	}
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;"+
		"BlobEndpoint=%s:10000/%s;QueueEndpoint=%s:10001/%s;TableEndpoint=%s:10002/%s;",
		DevAccountName, devAccountKey, host, DevAccountName, host, DevAccountName, host, DevAccountName)
}
