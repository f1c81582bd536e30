package azure

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// DefaultSettingName is the Functions app setting that names the storage account.
const DefaultSettingName = "AzureWebJobsStorage"

// CredentialManagedIdentity is the __credential value that selects the managed identity.
const CredentialManagedIdentity = "managedidentity"

// Settings describes one storage account connection. Either ConnectionString is set, or
// AccountName and/or the service URIs are (identity-based connection).
type Settings struct {
	// ConnectionString is a storage connection string, or "UseDevelopmentStorage=true".
	ConnectionString string
	// AccountName gives the default endpoints https://<AccountName>.{table,queue,blob}.core.windows.net.
	AccountName string
	// TableServiceURI, QueueServiceURI and BlobServiceURI override the endpoints of AccountName
	// (e.g. for a sovereign cloud or a private endpoint). Without AccountName all three are needed.
	TableServiceURI, QueueServiceURI, BlobServiceURI string
	// Credential is "" (DefaultAzureCredential) or "managedidentity".
	Credential string
	// ClientID selects a user-assigned managed identity.
	ClientID string
}

// SettingsFrom reads the setting named name (DefaultSettingName when "") and its
// identity-based variants (name__accountName, name__tableServiceUri, name__queueServiceUri,
// name__blobServiceUri, name__credential, name__clientId) through getenv.
func SettingsFrom(name string, getenv func(string) string) Settings {
	if name == "" {
		name = DefaultSettingName
	}
	get := func(suffix string) string { return strings.TrimSpace(getenv(name + suffix)) }
	return Settings{
		ConnectionString: get(""),
		AccountName:      get("__accountName"),
		TableServiceURI:  get("__tableServiceUri"),
		QueueServiceURI:  get("__queueServiceUri"),
		BlobServiceURI:   get("__blobServiceUri"),
		Credential:       get("__credential"),
		ClientID:         get("__clientId"),
	}
}

// Configured reports whether the settings name a storage account at all (an empty setting
// means "no Azure storage": the caller keeps its in-memory default).
func (s Settings) Configured() bool {
	return s.ConnectionString != "" || s.AccountName != "" || s.TableServiceURI != "" ||
		s.QueueServiceURI != "" || s.BlobServiceURI != ""
}

// UsesIdentity reports whether the settings describe an identity-based connection.
func (s Settings) UsesIdentity() bool { return s.ConnectionString == "" && s.Configured() }

// Validate checks that the settings describe exactly one usable connection. Its errors name
// settings, never their values.
func (s Settings) Validate() error {
	if !s.Configured() {
		return errors.New("storage settings: neither a connection string nor an account name is set")
	}
	if s.ConnectionString != "" {
		if s.AccountName != "" || s.TableServiceURI != "" || s.QueueServiceURI != "" || s.BlobServiceURI != "" {
			return errors.New("storage settings: set either the connection string or the identity-based settings, not both")
		}
		if _, err := parseConnectionString(s.ConnectionString); err != nil {
			return err
		}
		return nil
	}
	if s.Credential != "" && !strings.EqualFold(s.Credential, CredentialManagedIdentity) {
		return fmt.Errorf("storage settings: unsupported credential %q (use %q or leave it unset)", s.Credential, CredentialManagedIdentity)
	}
	if s.AccountName == "" && (s.TableServiceURI == "" || s.QueueServiceURI == "" || s.BlobServiceURI == "") {
		return errors.New("storage settings: without an account name, the table, queue and blob service URIs are all required")
	}
	if s.AccountName != "" && !validAccountName(s.AccountName) {
		return errors.New("storage settings: the account name must be 3-24 lowercase letters and digits")
	}
	for _, u := range []struct{ name, v string }{{"tableServiceUri", s.TableServiceURI}, {"queueServiceUri", s.QueueServiceURI}, {"blobServiceUri", s.BlobServiceURI}} {
		if u.v == "" {
			continue
		}
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return fmt.Errorf("storage settings: %s is not an http(s) URL", u.name)
		}
	}
	return nil
}

func validAccountName(n string) bool {
	if len(n) < 3 || len(n) > 24 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// endpoints returns the three service URLs of identity-based settings.
func (s Settings) endpoints() (table, queue, blob string) {
	table, queue, blob = s.TableServiceURI, s.QueueServiceURI, s.BlobServiceURI
	if s.AccountName != "" {
		def := func(v, svc string) string {
			if v != "" {
				return v
			}
			return "https://" + s.AccountName + "." + svc + ".core.windows.net/"
		}
		table, queue, blob = def(table, "table"), def(queue, "queue"), def(blob, "blob")
	}
	return table, queue, blob
}
