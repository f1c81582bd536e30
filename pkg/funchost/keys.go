package funchost

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Keys are the secrets the standalone server checks, shaped like the host's: a master key,
// host-level function keys (valid for every function-level route), system keys and
// per-function keys. Values are compared in constant time and never logged.
type Keys struct {
	// Master grants admin level.
	Master string
	// HostFunction holds host-level function keys by name.
	HostFunction map[string]string
	// System holds host system keys by name. They do not satisfy function-level routes.
	System map[string]string
	// Function holds each function's own keys: function name (case-insensitive) → key name →
	// value.
	Function map[string]map[string]string
}

// keyLevel is what a presented key is worth.
type keyLevel int

const (
	levelNone keyLevel = iota
	levelFunction
	levelSystem
	levelAdmin
)

// Empty reports whether no key at all is configured.
func (k Keys) Empty() bool {
	if k.Master != "" || len(k.HostFunction) > 0 || len(k.System) > 0 {
		return false
	}
	for _, fk := range k.Function {
		if len(fk) > 0 {
			return false
		}
	}
	return true
}

func keyEqual(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// keyName returns the name of the entry of m equal to key, comparing every entry in constant
// time.
func keyName(m map[string]string, key string) (string, bool) {
	name, found := "", false
	for k, v := range m {
		if keyEqual(v, key) && !found {
			name, found = k, true
		}
	}
	return name, found
}

// masterKeyName is the host's name for the master key.
const masterKeyName = "master"

// level resolves a presented key as the host does: master → admin, system keys → system, host
// function keys and the function's own keys → function, anything else → none. It also returns
// the key's name.
func (k Keys) level(function, key string) (keyLevel, string) {
	if key == "" {
		return levelNone, ""
	}
	if keyEqual(k.Master, key) {
		return levelAdmin, masterKeyName
	}
	if name, ok := keyName(k.System, key); ok {
		return levelSystem, name
	}
	if name, ok := keyName(k.HostFunction, key); ok {
		return levelFunction, name
	}
	for fn, fk := range k.Function {
		if strings.EqualFold(fn, function) {
			if name, ok := keyName(fk, key); ok {
				return levelFunction, name
			}
		}
	}
	return levelNone, ""
}

// authorize reports whether a request may call function at the required level, and what the
// presented key resolved to: anonymous always passes (even with a wrong key), and its key is
// resolved only when one was presented (as the host does); otherwise the key from the
// `x-functions-key` header, else the first `code` query value (see PresentedKey), must resolve
// to admin or to exactly the required level.
func (k Keys) authorize(r *http.Request, function string, required AuthLevel) (bool, keyLevel) {
	if required == AuthAnonymous {
		if key := PresentedKey(r); key != "" {
			lvl, _ := k.level(function, key)
			return true, lvl
		}
		return true, levelNone
	}
	lvl, _ := k.level(function, PresentedKey(r))
	if lvl == levelAdmin {
		return true, lvl
	}
	return required == AuthFunction && lvl == levelFunction, lvl
}

// PresentedKey returns the key a request carries, as the host reads it: the `x-functions-key`
// header if present (even empty: then there is no key and `code` is not read), else the first
// `code` query value, the name matched case-insensitively (`?Code=` works).
func PresentedKey(r *http.Request) string {
	if vs, ok := r.Header["X-Functions-Key"]; ok {
		if len(vs) > 0 {
			return vs[0]
		}
		return ""
	}
	for k, vs := range r.Header {
		if strings.EqualFold(k, "x-functions-key") { // a header map not built by net/http
			if len(vs) > 0 {
				return vs[0]
			}
			return ""
		}
	}
	if r.URL == nil {
		return ""
	}
	for part := range strings.SplitSeq(r.URL.RawQuery, "&") {
		name, value, _ := strings.Cut(part, "=")
		if n, err := url.QueryUnescape(name); err == nil && strings.EqualFold(n, "code") {
			v, err := url.QueryUnescape(value)
			if err != nil {
				return ""
			}
			return v
		}
	}
	return ""
}

type secretFile struct {
	MasterKey    *secretKey             `json:"masterKey"`
	FunctionKeys []secretKey            `json:"functionKeys"`
	SystemKeys   []secretKey            `json:"systemKeys"`
	Functions    map[string][]secretKey `json:"functions"`
}

type secretKey struct {
	Name      string `json:"name"`
	Value     string `json:"value"`
	Encrypted bool   `json:"encrypted"`
}

// LoadKeysFile reads keys from a JSON file shaped like the host's secrets blob
// (`{"masterKey": {name, value}, "functionKeys": [...], "systemKeys": [...]}`), extended with
// `"functions": {"<function name>": [{name, value}]}` for per-function keys. Encrypted values
// are refused.
func LoadKeysFile(path string) (Keys, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Keys{}, fmt.Errorf("load keys file: %w", err)
	}
	return parseKeys(data)
}

// parseKeys parses the keys file format of LoadKeysFile.
func parseKeys(data []byte) (Keys, error) {
	var f secretFile
	if err := json.Unmarshal(data, &f); err != nil {
		return Keys{}, fmt.Errorf("parse keys: %w", err)
	}
	var k Keys
	collect := func(list []secretKey, what string) (map[string]string, error) {
		if len(list) == 0 {
			return nil, nil
		}
		m := make(map[string]string, len(list))
		for i, s := range list {
			if s.Encrypted {
				return nil, fmt.Errorf("parse keys: %s key %d is encrypted; store plain values", what, i)
			}
			if s.Value == "" {
				return nil, fmt.Errorf("parse keys: %s key %d has no value", what, i)
			}
			name := s.Name
			if name == "" {
				name = fmt.Sprintf("key%d", i)
			}
			m[name] = s.Value
		}
		return m, nil
	}
	var err error
	if f.MasterKey != nil {
		if f.MasterKey.Encrypted || f.MasterKey.Value == "" {
			return Keys{}, fmt.Errorf("parse keys: master key must have a plain value")
		}
		k.Master = f.MasterKey.Value
	}
	if k.HostFunction, err = collect(f.FunctionKeys, "function"); err != nil {
		return Keys{}, err
	}
	if k.System, err = collect(f.SystemKeys, "system"); err != nil {
		return Keys{}, err
	}
	for fn, list := range f.Functions {
		m, err := collect(list, "function "+fn)
		if err != nil {
			return Keys{}, err
		}
		if k.Function == nil {
			k.Function = map[string]map[string]string{}
		}
		k.Function[fn] = m
	}
	return k, nil
}
