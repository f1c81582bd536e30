package isolation

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// OwnerKey is the metadata key that records an object's owner: thread metadata on the
// platform routes, run metadata on the runs API.
const OwnerKey = "owner"

// Headers App Service Authentication sets on every request it lets through, after removing
// any copy the client sent.
const (
	// PrincipalIDHeader is the caller's id at its identity provider.
	PrincipalIDHeader = "X-MS-CLIENT-PRINCIPAL-ID"
	// PrincipalIDPHeader names the identity provider ("aad", "github", ...).
	PrincipalIDPHeader = "X-MS-CLIENT-PRINCIPAL-IDP"
)

// MaxIdentityBytes bounds an identity: a longer one is refused (ErrInvalidIdentity), so an
// owner always fits the stores' metadata.
const MaxIdentityBytes = 512

// Errors of Caller, each a case of one kind of the HTTP surfaces' error vocabulary, which
// gives its status. Each surface answers them in its own error format.
var (
	// ErrNoIdentity reports a request with isolation on that carries no identity (nor the
	// master key): answered 401.
	ErrNoIdentity = apierror.NewKind(apierror.ErrUnauthorized, "isolation: the request carries no caller identity")
	// ErrUntrustedIdentity reports an identity header from a peer that is not a trusted
	// proxy: answered 403. The header is never believed.
	ErrUntrustedIdentity = apierror.NewKind(apierror.ErrForbidden, "isolation: identity header from an untrusted peer")
	// ErrInvalidIdentity reports an identity ValidIdentity refuses (a control character,
	// whitespace other than the space, not UTF-8, too long): answered 400, whatever key
	// comes with it.
	ErrInvalidIdentity = apierror.NewKind(apierror.ErrBadRequest, "isolation: the caller identity is not valid")
)

// Config configures an Isolation. Under the Functions host only App Service
// Authentication's headers are read, and both fields are ignored: the zero Config is
// isolation under the host only (on the standalone server only the master key is then let
// through).
type Config struct {
	// IdentityHeader names the request header that carries the caller's identity on the
	// standalone server (e.g. X-Forwarded-User set by an authenticating proxy).
	IdentityHeader string
	// TrustedProxies are the peer addresses (CIDR prefixes) whose IdentityHeader is
	// believed. A request from any other peer that carries the header is refused
	// (ErrUntrustedIdentity). Required with IdentityHeader.
	TrustedProxies []netip.Prefix
}

// Validate reports a config that cannot work: a header name that is not one, or an identity
// header without trusted proxies (or proxies without a header).
func (c Config) Validate() error {
	h := strings.TrimSpace(c.IdentityHeader)
	switch {
	case h != "" && !validHeaderName(h):
		return fmt.Errorf("isolation: %q is not a header name", c.IdentityHeader)
	case h != "" && len(c.TrustedProxies) == 0:
		return errors.New("isolation: an identity header needs at least one trusted proxy")
	case h == "" && len(c.TrustedProxies) > 0:
		return errors.New("isolation: trusted proxies need an identity header")
	}
	return nil
}

// Isolation resolves callers. A nil *Isolation means isolation is off.
type Isolation struct {
	header  string
	proxies []netip.Prefix
}

// New returns an Isolation for cfg; see Config.Validate.
func New(cfg Config) (*Isolation, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	proxies := make([]netip.Prefix, len(cfg.TrustedProxies))
	for i, p := range cfg.TrustedProxies {
		proxies[i] = p.Masked()
	}
	return &Isolation{header: http.CanonicalHeaderKey(strings.TrimSpace(cfg.IdentityHeader)), proxies: proxies}, nil
}

// Caller is who made a request.
type Caller struct {
	// ID is the caller's identity, recorded as the owner of what it creates; "" for an
	// admin that sent none.
	ID string
	// Admin is a caller with the master key: it sees and acts on every object, and the
	// owner it gives on create is kept as given.
	Admin bool
}

// Owns reports whether c may see an object owned by owner: an admin always, anyone else
// only its own ("" — an object created while isolation was off — is the admin's only).
func (c Caller) Owns(owner any) bool {
	if c.Admin {
		return true
	}
	s, ok := owner.(string)
	return ok && s != "" && s == c.ID
}

// Caller resolves the caller of r. Under the Functions host (funchost.SourceHost) the
// identity is X-MS-CLIENT-PRINCIPAL-ID, as "<idp>:<id>" when X-MS-CLIENT-PRINCIPAL-IDP is
// set; elsewhere it is the configured identity header, refused with ErrUntrustedIdentity
// unless the peer is a trusted proxy. Each header value loses the ASCII spaces and tabs
// around it (the optional whitespace of an HTTP field) and nothing else: identities are
// compared exactly as sent, and one that ValidIdentity refuses is ErrInvalidIdentity. The
// master key (funchost.CallerLevel Admin) makes the caller an admin. Without an identity and
// without the master key it returns ErrNoIdentity.
func (iso *Isolation) Caller(r *http.Request) (Caller, error) {
	ctx := r.Context()
	c := Caller{Admin: funchost.CallerLevel(ctx) == funchost.KeyLevelAdmin}
	if funchost.RequestSource(ctx) == funchost.SourceHost {
		c.ID = trimOWS(r.Header.Get(PrincipalIDHeader))
		if idp := trimOWS(r.Header.Get(PrincipalIDPHeader)); c.ID != "" && idp != "" {
			if !ValidIdentity(idp) {
				return Caller{}, ErrInvalidIdentity
			}
			c.ID = idp + ":" + c.ID
		}
	} else if vs, ok := r.Header[iso.header]; ok && iso.header != "" {
		if !iso.trusted(r.RemoteAddr) {
			return Caller{}, ErrUntrustedIdentity
		}
		if len(vs) == 1 {
			c.ID = trimOWS(vs[0])
		}
	}
	if c.ID != "" && !ValidIdentity(c.ID) {
		return Caller{}, ErrInvalidIdentity
	}
	if c.ID == "" && !c.Admin {
		return Caller{}, ErrNoIdentity
	}
	return c, nil
}

// ValidIdentity reports whether id can be an identity as it is: at most MaxIdentityBytes of
// valid UTF-8 without control characters (U+0000–U+001F, U+007F–U+009F) and without
// whitespace other than the ASCII space (no tab, no-break space, line separator, ...). Such
// characters are invisible or look like a space, so two identities a person reads as one
// would own different objects; they are refused instead of trimmed or folded.
func ValidIdentity(id string) bool {
	if len(id) > MaxIdentityBytes || !utf8.ValidString(id) {
		return false
	}
	for _, c := range id {
		if unicode.IsControl(c) || (c != ' ' && unicode.IsSpace(c)) {
			return false
		}
	}
	return true
}

// trimOWS removes the ASCII spaces and tabs around a header value.
func trimOWS(v string) string { return strings.Trim(v, " \t") }

// trusted reports whether the peer address (host:port, or a bare IP) is a trusted proxy.
func (iso *Isolation) trusted(remote string) bool {
	host := remote
	if h, _, err := net.SplitHostPort(remote); err == nil {
		host = h
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, p := range iso.proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// ParseProxies parses a comma-separated list of CIDR prefixes or single addresses (a bare
// address is a /32 or /128).
func ParseProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("parse trusted proxy %q: want a CIDR prefix or an IP address", part)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// validHeaderName reports whether s is an HTTP token.
func validHeaderName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return s != ""
}
