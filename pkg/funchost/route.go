package funchost

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// RouteTemplate is a parsed ASP.NET Core route template as the Functions host understands it:
// literal segments (matched case-insensitively), parameters `{name}`, optional `{name?}`,
// defaulted `{name=value}`, catch-all `{*name}` and inline constraints such as `{id:int}` or
// `{slug:regex(^[a-z]+$)}`.
//
// Complex segments that mix literal text and parameters (`{a}.{b}`) are not supported and are
// refused by ParseRouteTemplate.
type RouteTemplate struct {
	text     string
	segments []routeSegment
}

type routeSegment struct {
	literal     string // set for literal segments
	param       string // set for parameter segments
	optional    bool
	hasDefault  bool
	defaultVal  string
	catchAll    bool
	constraints []routeConstraint
}

type routeConstraint struct {
	text  string
	check func(string) bool
}

func (s routeSegment) isParam() bool { return s.param != "" }

// canBeAbsent reports whether a request path may end before this segment.
func (s routeSegment) canBeAbsent() bool { return s.optional || s.hasDefault || s.catchAll }

// ParseRouteTemplate parses a route template given without the route prefix, e.g.
// `graphs/{graph_name}/runs`. Leading and trailing slashes are ignored.
func ParseRouteTemplate(text string) (*RouteTemplate, error) {
	trimmed := strings.Trim(text, "/")
	t := &RouteTemplate{text: trimmed}
	if trimmed == "" {
		return t, nil
	}
	seen := map[string]bool{}
	for i, raw := range strings.Split(trimmed, "/") {
		seg, err := parseSegment(raw)
		if err != nil {
			return nil, fmt.Errorf("parse route %q segment %d: %w", text, i+1, err)
		}
		if seg.isParam() {
			key := strings.ToLower(seg.param)
			if seen[key] {
				return nil, fmt.Errorf("parse route %q: parameter %q appears twice", text, seg.param)
			}
			seen[key] = true
		}
		t.segments = append(t.segments, seg)
	}
	for i, seg := range t.segments {
		if seg.catchAll && i != len(t.segments)-1 {
			return nil, fmt.Errorf("parse route %q: a catch-all parameter must be the last segment", text)
		}
		if seg.canBeAbsent() {
			for _, later := range t.segments[i+1:] {
				if !later.canBeAbsent() {
					return nil, fmt.Errorf("parse route %q: optional parameter %q is followed by a required segment", text, seg.param)
				}
			}
		}
	}
	return t, nil
}

func parseSegment(raw string) (routeSegment, error) {
	if raw == "" {
		return routeSegment{}, errors.New("empty segment")
	}
	if !strings.HasPrefix(raw, "{") {
		if strings.ContainsAny(raw, "{}") {
			return routeSegment{}, fmt.Errorf("complex segment %q is not supported", raw)
		}
		return routeSegment{literal: raw}, nil
	}
	if !strings.HasSuffix(raw, "}") || strings.Count(raw, "{") != 1 {
		return routeSegment{}, fmt.Errorf("complex segment %q is not supported", raw)
	}
	body := raw[1 : len(raw)-1]
	var seg routeSegment
	if strings.HasPrefix(body, "**") {
		seg.catchAll, body = true, body[2:]
	} else if strings.HasPrefix(body, "*") {
		seg.catchAll, body = true, body[1:]
	}
	// Name runs up to the first ':', '=' or '?'.
	end := strings.IndexAny(body, ":=?")
	name := body
	rest := ""
	if end >= 0 {
		name, rest = body[:end], body[end:]
	}
	if name == "" {
		return routeSegment{}, fmt.Errorf("parameter %q has no name", raw)
	}
	seg.param = name
	for rest != "" {
		switch rest[0] {
		case ':':
			text, tail := splitConstraint(rest[1:])
			c, err := parseConstraint(text)
			if err != nil {
				return routeSegment{}, err
			}
			seg.constraints = append(seg.constraints, c)
			rest = tail
		case '?':
			if rest != "?" {
				return routeSegment{}, fmt.Errorf("parameter %q: '?' must come last", raw)
			}
			seg.optional, rest = true, ""
		case '=':
			seg.hasDefault, seg.defaultVal, rest = true, rest[1:], ""
		default:
			return routeSegment{}, fmt.Errorf("parameter %q is malformed", raw)
		}
	}
	if seg.catchAll && seg.optional {
		return routeSegment{}, fmt.Errorf("catch-all parameter %q cannot be optional", raw)
	}
	if seg.hasDefault && seg.optional {
		return routeSegment{}, fmt.Errorf("parameter %q cannot be both optional and defaulted", raw)
	}
	return seg, nil
}

// splitConstraint cuts one constraint off s, honouring parentheses (regex constraints may
// contain ':', '=' and '?').
func splitConstraint(s string) (constraint, rest string) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ':', '=', '?':
			if depth == 0 {
				return s[:i], s[i:]
			}
		}
	}
	return s, ""
}

func parseConstraint(text string) (routeConstraint, error) {
	name, arg, hasArg := text, "", false
	if i := strings.IndexByte(text, '('); i >= 0 {
		if !strings.HasSuffix(text, ")") {
			return routeConstraint{}, fmt.Errorf("constraint %q is malformed", text)
		}
		name, arg, hasArg = text[:i], text[i+1:len(text)-1], true
	}
	c := routeConstraint{text: text}
	ints := func(n int) ([]int64, error) {
		parts := strings.Split(arg, ",")
		if !hasArg || len(parts) != n {
			return nil, fmt.Errorf("constraint %q needs %d argument(s)", text, n)
		}
		out := make([]int64, n)
		for i, p := range parts {
			v, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("constraint %q: argument %q is not an integer", text, p)
			}
			out[i] = v
		}
		return out, nil
	}
	runeLen := func(v string) int64 { return int64(len([]rune(v))) }
	switch strings.ToLower(name) {
	case "int":
		c.check = func(v string) bool { _, err := strconv.ParseInt(v, 10, 32); return err == nil }
	case "long":
		c.check = func(v string) bool { _, err := strconv.ParseInt(v, 10, 64); return err == nil }
	case "bool":
		c.check = func(v string) bool { return strings.EqualFold(v, "true") || strings.EqualFold(v, "false") }
	case "guid":
		c.check = func(v string) bool { _, err := uuid.Parse(v); return err == nil }
	case "datetime":
		c.check = isDateTime
	case "decimal", "double", "float":
		c.check = func(v string) bool {
			f, err := strconv.ParseFloat(v, 64)
			return err == nil && !strings.ContainsAny(v, "xXpP_") && f == f
		}
	case "alpha":
		c.check = func(v string) bool {
			for i := 0; i < len(v); i++ {
				if b := v[i] | 0x20; b < 'a' || b > 'z' {
					return false
				}
			}
			return v != ""
		}
	case "required":
		c.check = func(v string) bool { return v != "" }
	case "minlength", "maxlength", "min", "max":
		n, err := ints(1)
		if err != nil {
			return c, err
		}
		switch strings.ToLower(name) {
		case "minlength":
			c.check = func(v string) bool { return runeLen(v) >= n[0] }
		case "maxlength":
			c.check = func(v string) bool { return runeLen(v) <= n[0] }
		case "min":
			c.check = func(v string) bool { x, err := strconv.ParseInt(v, 10, 64); return err == nil && x >= n[0] }
		case "max":
			c.check = func(v string) bool { x, err := strconv.ParseInt(v, 10, 64); return err == nil && x <= n[0] }
		}
	case "length":
		if n, err := ints(1); err == nil {
			c.check = func(v string) bool { return runeLen(v) == n[0] }
		} else if n, err2 := ints(2); err2 == nil {
			c.check = func(v string) bool { l := runeLen(v); return l >= n[0] && l <= n[1] }
		} else {
			return c, err
		}
	case "range":
		n, err := ints(2)
		if err != nil {
			return c, err
		}
		c.check = func(v string) bool {
			x, err := strconv.ParseInt(v, 10, 64)
			return err == nil && x >= n[0] && x <= n[1]
		}
	case "regex":
		if !hasArg {
			return c, fmt.Errorf("constraint %q needs a pattern", text)
		}
		re, err := regexp.Compile("(?i)" + arg)
		if err != nil {
			return c, fmt.Errorf("constraint %q: %w", text, err)
		}
		c.check = re.MatchString
	default:
		return c, fmt.Errorf("unknown route constraint %q", name)
	}
	return c, nil
}

var dateTimeLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05",
	"2006-01-02", "01/02/2006", "01/02/2006 15:04:05",
}

func isDateTime(v string) bool {
	for _, layout := range dateTimeLayouts {
		if _, err := time.Parse(layout, v); err == nil {
			return true
		}
	}
	return false
}

// String returns the template text without leading or trailing slashes.
func (t *RouteTemplate) String() string { return t.text }

// Match matches a request path (without the route prefix, already split from its query) and
// returns the route values. An unmatched optional parameter is present with a nil value, as
// the host sends it in `Params`. Literal segments match case-insensitively; parameter values
// are percent-decoded.
func (t *RouteTemplate) Match(path string) (map[string]*string, bool) {
	path = strings.Trim(path, "/")
	var parts []string
	if path != "" {
		parts = strings.Split(path, "/")
	}
	var values map[string]*string
	if len(t.segments) > 0 {
		values = make(map[string]*string, len(t.segments))
	}
	for i, seg := range t.segments {
		if seg.catchAll {
			rest := strings.Join(parts[min(i, len(parts)):], "/")
			v, err := url.PathUnescape(rest)
			if err != nil {
				return nil, false
			}
			if v == "" && seg.hasDefault {
				v = seg.defaultVal
			}
			if !seg.accepts(v) && v != "" {
				return nil, false
			}
			values[seg.param] = &v
			return values, true
		}
		if i >= len(parts) {
			switch {
			case seg.hasDefault:
				v := seg.defaultVal
				values[seg.param] = &v
			case seg.optional:
				values[seg.param] = nil
			default:
				return nil, false
			}
			continue
		}
		part := parts[i]
		if !seg.isParam() {
			if !strings.EqualFold(part, seg.literal) {
				return nil, false
			}
			continue
		}
		v, err := url.PathUnescape(part)
		if err != nil || v == "" || !seg.accepts(v) {
			return nil, false
		}
		values[seg.param] = &v
	}
	if len(parts) > len(t.segments) {
		return nil, false
	}
	return values, true
}

func (s routeSegment) accepts(v string) bool {
	for _, c := range s.constraints {
		if !c.check(v) {
			return false
		}
	}
	return true
}
