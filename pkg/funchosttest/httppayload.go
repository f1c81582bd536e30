package funchosttest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// Claim types and defaults of the identities the host serialises into `Identities`.
const (
	claimAuthLevel    = "http://schemas.microsoft.com/2017/07/functions/claims/authlevel"
	claimInvoke       = "http://schemas.microsoft.com/2017/07/functions/claims/invoke"
	claimKeyID        = "http://schemas.microsoft.com/2017/07/functions/claims/keyid"
	claimNameType     = "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name"
	claimRoleType     = "http://schemas.microsoft.com/ws/2008/06/identity/claims/role"
	claimStringType   = "http://www.w3.org/2001/XMLSchema#string"
	claimLocalIssuer  = "LOCAL AUTHORITY"
	authLevelAuthType = "WebJobsAuthLevel"
)

// callerKey is the level and key name the host grants the request: Admin for everything in
// bypass mode; otherwise what the presented key (see funchost.PresentedKey) resolves to.
func (e *Emulator) callerKey(r *http.Request, f *function) (funchost.KeyLevel, string) {
	if e.opts.AuthMode == AuthBypass {
		return funchost.KeyLevelAdmin, ""
	}
	return e.opts.Keys.Resolve(f.Name, funchost.PresentedKey(r))
}

// httpTriggerValue builds Data.<req> for a request as the host does (GetRequestAsJObject).
func httpTriggerValue(r *http.Request, body []byte, params map[string]*string, identities []any) map[string]any {
	headers := map[string][]string{}
	for k, vs := range r.Header {
		headers[k] = append([]string{}, vs...)
	}
	if r.Host != "" {
		headers["Host"] = []string{r.Host}
	}
	if params == nil {
		params = map[string]*string{}
	}
	v := map[string]any{
		"Url":        "http://" + r.Host + r.URL.RequestURI(),
		"Method":     r.Method,
		"Query":      queryDictionary(r),
		"Headers":    headers,
		"Params":     params,
		"Identities": identities,
	}
	if body != nil {
		if isBinaryMediaType(r.Header.Get("Content-Type")) {
			v["Body"] = base64.StdEncoding.EncodeToString(body)
		} else {
			v["Body"] = string(body)
		}
	}
	return v
}

// queryDictionary is the host's query dictionary: one comma-joined string per name.
func queryDictionary(r *http.Request) map[string]string {
	query := map[string]string{}
	for _, p := range hostQuery(r.URL.RawQuery) {
		query[p.name] = p.value
	}
	return query
}

// isBinaryMediaType reports the media types whose bodies the host sends base64-encoded.
func isBinaryMediaType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	return mt == "application/octet-stream" || hasPrefixFold(mt, "multipart/")
}

// identities is the Identities array as the host serialises the caller's ClaimsPrincipal:
// with a key that resolves, one identity of the WebJobsAuthLevel scheme carrying the authlevel
// and invoke claims (and keyid when the key has a name); without one, ASP.NET Core's single
// empty, unauthenticated identity.
func identities(level funchost.KeyLevel, keyName string) []any {
	if level == funchost.KeyLevelNone {
		return []any{claimsIdentity(nil, nil)}
	}
	claims := []any{claim(claimAuthLevel, string(level)), claim(claimInvoke, "true")}
	if keyName != "" {
		claims = append(claims, claim(claimKeyID, keyName))
	}
	authType := authLevelAuthType
	return []any{claimsIdentity(&authType, claims)}
}

func claimsIdentity(authType *string, claims []any) map[string]any {
	if claims == nil {
		claims = []any{}
	}
	return map[string]any{
		"AuthenticationType": authType,
		"IsAuthenticated":    authType != nil,
		"Actor":              nil,
		"BootstrapContext":   nil,
		"Claims":             claims,
		"Label":              nil,
		"Name":               nil,
		"NameClaimType":      claimNameType,
		"RoleClaimType":      claimRoleType,
	}
}

// claim is one serialised Claim; its Subject points back at the identity and is dropped by the
// host's ReferenceLoopHandling.Ignore.
func claim(typ, value string) map[string]any {
	return map[string]any{
		"Issuer":         claimLocalIssuer,
		"OriginalIssuer": claimLocalIssuer,
		"Properties":     map[string]any{},
		"Type":           typ,
		"Value":          value,
		"ValueType":      claimStringType,
	}
}

// httpMetadata is Metadata for an HTTP invocation, built from the HTTP extension's binding
// data as the host converts it: the top-level members of a JSON object body, then every query
// parameter but `code`, then the route parameters, then `Query` (one comma-joined string per
// name) and `Headers` (likewise) unless a member of that name already exists; names compare
// case-insensitively and the first spelling stays. Strings arrive double-encoded (the host's
// JObject.FromObject fails on them and it falls back to JsonConvert.SerializeObject), scalar
// body members as their .NET text, arrays as their JSON text, objects as objects; null values
// and names ending in "trigger" are dropped; `sys` is added.
func httpMetadata(f *function, r *http.Request, body []byte, params map[string]*string) map[string]any {
	md := map[string]any{}
	set := func(k string, v any) {
		for have := range md {
			if strings.EqualFold(have, k) {
				md[have] = v
				return
			}
		}
		md[k] = v
	}
	has := func(k string) bool {
		for have := range md {
			if strings.EqualFold(have, k) {
				return true
			}
		}
		return false
	}
	for k, v := range bodyMembers(body) {
		set(k, v)
	}
	for k, v := range queryDictionary(r) {
		if !strings.EqualFold(k, "code") {
			set(k, doubleEncoded(v))
		}
	}
	for k, v := range params {
		if v != nil {
			set(k, doubleEncoded(*v))
		}
	}
	if !has("Query") {
		md["Query"] = queryDictionary(r)
	}
	if !has("Headers") {
		headers := map[string]string{}
		for k, vs := range r.Header {
			headers[k] = strings.Join(vs, ",")
		}
		if r.Host != "" {
			headers["Host"] = r.Host
		}
		md["Headers"] = headers
	}
	for k := range md {
		if strings.HasSuffix(strings.ToLower(k), "trigger") {
			delete(md, k)
		}
	}
	md["sys"] = sysMetadata(f.Name)
	return md
}

// bodyMembers converts the top-level members of a JSON object body into Metadata values.
func bodyMembers(body []byte) map[string]any {
	out := map[string]any{}
	var obj map[string]json.RawMessage
	if len(body) == 0 || json.Unmarshal(body, &obj) != nil {
		return out
	}
	for k, raw := range obj {
		raw = bytes.TrimSpace(raw)
		switch {
		case string(raw) == "null":
		case raw[0] == '{':
			out[k] = raw
		case raw[0] == '[':
			var buf bytes.Buffer
			_ = json.Compact(&buf, raw)
			out[k] = buf.String()
		case raw[0] == '"':
			var s string
			_ = json.Unmarshal(raw, &s)
			out[k] = doubleEncoded(s)
		case string(raw) == "true":
			out[k] = doubleEncoded("True")
		case string(raw) == "false":
			out[k] = doubleEncoded("False")
		default:
			out[k] = doubleEncoded(string(raw))
		}
	}
	return out
}

// doubleEncoded is a string as the host puts it in Metadata: its JSON text.
func doubleEncoded(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // Newtonsoft leaves <, > and & alone
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}
