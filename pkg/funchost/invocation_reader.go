package funchost

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/funcgraph/funcgraph/pkg/internal/jsonenc"
	"io"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// This file holds the reader of the HTTP invocation payload, the hot path of every HTTP request
// under the Functions host. It reads `{"Data": {"<binding>": <httpTrigger>}, ...}` in one pass
// with a pooled jsontext.Decoder, skipping (but validating) everything else, instead of
// encoding/json's reflection and repeated validation of nested RawMessages. It follows
// encoding/json's rules: exactly RFC 8259 JSON, keys matched case-insensitively, the last
// duplicate wins, invalid UTF-8 in strings becomes U+FFFD, at most 10 000 levels of nesting.
// FuzzDecodeHTTPInvocation checks it against encoding/json.

var (
	// errSyntax is the one error of malformed JSON, whatever the decoder found.
	errSyntax = errors.New("invalid JSON")
	// errBodyNotBase64 reports a binary body that is not base64.
	errBodyNotBase64 = errors.New("body is not base64")
)

// readerOptions are encoding/json's rules: duplicates allowed (the last wins), invalid UTF-8
// allowed (replaced by U+FFFD). jsontext's nesting limit is encoding/json's 10 000 levels.
var readerOptions = []jsontext.Options{
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
}

// invocationReader is a pooled decoder over a pooled bytes.Buffer: jsontext reads a
// *bytes.Buffer in place, so values alias the payload.
type invocationReader struct {
	dec jsontext.Decoder
	buf bytes.Buffer
}

var readerPool = sync.Pool{New: func() any { return new(invocationReader) }}

// decodeHTTPInvocation reads `{"Data": {"<binding>": <httpTrigger>}, ...}` and returns the
// decoded trigger (nil when the binding is missing or null). The trigger does not alias data.
func decodeHTTPInvocation(data []byte, binding string) (*httpTrigger, error) {
	return decodeHTTPInvocationBody(data, binding, nil)
}

// decodeHTTPInvocationBody is decodeHTTPInvocation with the trigger's Body left where it is
// when scratch is not nil: a string body without escapes aliases data, an escaped one is
// unescaped once into scratch's body, and the trigger is scratch's own. The trigger is then
// valid only while neither data nor scratch is reused (the hot path: while the handler runs).
//
// With scratch, the trigger's Headers are read into the rebuilt request's header (canonical,
// see readCanonicalHeaders), not into Headers, which stays nil.
func decodeHTTPInvocationBody(data []byte, binding string, scratch *hotScratch) (*httpTrigger, error) {
	r := readerPool.Get().(*invocationReader)
	r.buf = *bytes.NewBuffer(data)
	trig, err := r.decode(binding, scratch)
	r.buf = bytes.Buffer{}
	r.dec.Reset(&r.buf)
	readerPool.Put(r)
	return trig, err
}

// decode is decodeHTTPInvocationBody of the payload in r.buf, read in place: the trigger's
// body and header values may alias it.
func (r *invocationReader) decode(binding string, scratch *hotScratch) (*httpTrigger, error) {
	r.dec.Reset(&r.buf, readerOptions...)
	trig, err := readInvocation(&r.dec, binding, scratch)
	if err != nil {
		if !errors.Is(err, errBodyNotBase64) && !errors.Is(err, errBadInvocation) {
			err = errSyntax // the decoder's own error, or trailing data
		}
		return nil, fmt.Errorf("%w: %v", errBadInvocation, err)
	}
	if trig == nil {
		return nil, nil
	}
	if trig.Method == "" {
		return nil, fmt.Errorf("%w: http trigger has no Method", errBadInvocation)
	}
	return trig, nil
}

func readInvocation(d *jsontext.Decoder, binding string, scratch *hotScratch) (*httpTrigger, error) {
	var trig *httpTrigger
	err := readObject(d, func(key []byte) error {
		if !bytes.EqualFold(key, []byte("Data")) {
			return d.SkipValue()
		}
		if d.PeekKind() == 'n' {
			trig = nil // like encoding/json: a later null Data clears the bindings
			_, err := d.ReadToken()
			return err
		}
		return readObject(d, func(key []byte) error {
			if !bytes.EqualFold(key, []byte(binding)) {
				return d.SkipValue()
			}
			if d.PeekKind() == 'n' {
				trig = nil
				_, err := d.ReadToken()
				return err
			}
			t, err := readHTTPTrigger(d, scratch)
			trig = t
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return nil, errSyntax // a second value or trailing bytes after the payload
	}
	return trig, nil
}

// readObject calls fn for each member of the object at the decoder, with the decoder
// positioned at the member's value; fn must consume it. key is valid only until fn reads.
func readObject(d *jsontext.Decoder, fn func(key []byte) error) error {
	tok, err := d.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return errSyntax
	}
	for d.PeekKind() != '}' {
		name, err := d.ReadValue()
		if err != nil {
			return err
		}
		key, _ := unquote(name)
		if err := fn(key); err != nil {
			return err
		}
	}
	_, err = d.ReadToken()
	return err
}

// unquote returns the decoded bytes of the JSON string v, already validated by the decoder,
// and whether they are a fresh copy: a string without escapes or invalid UTF-8 aliases v.
// Invalid UTF-8 becomes U+FFFD per byte, as encoding/json does.
func unquote(v []byte) (b []byte, fresh bool) {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		if utf8.Valid(inner) {
			return inner, false
		}
		return replaceInvalidUTF8(inner), true
	}
	// Unescaped text is shorter than v, so it takes one allocation.
	return jsonenc.AppendUnquoted(make([]byte, 0, len(v)), v), true
}

// unquoteInto is unquote that, for a string with escapes or invalid UTF-8, writes into
// scratch's storage (grown to fit, left empty) instead of a fresh slice.
func unquoteInto(scratch *bytes.Buffer, v []byte) []byte {
	if inner, ok := jsonenc.Plain(v); ok {
		return inner
	}
	scratch.Reset()
	scratch.Grow(len(v))
	return jsonenc.AppendUnquoted(scratch.AvailableBuffer(), v)
}

// unquoteString is unquote as a string.
func unquoteString(v []byte) string {
	b, _ := unquote(v)
	return string(b)
}

// readOptString reads a string or null (as "").
func readOptString(d *jsontext.Decoder) (string, error) {
	v, err := d.ReadValue()
	if err != nil {
		return "", err
	}
	switch v.Kind() {
	case 'n':
		return "", nil
	case '"':
		return unquoteString(v), nil
	}
	return "", errSyntax
}

// readMethod is readOptString for Method: the common methods, as the host spells them, come
// back without an allocation.
func readMethod(d *jsontext.Decoder) (string, error) {
	if d.PeekKind() == '"' {
		v, err := d.ReadValue()
		if err != nil {
			return "", err
		}
		switch string(v) {
		case `"POST"`:
			return http.MethodPost, nil
		case `"GET"`:
			return http.MethodGet, nil
		}
		return unquoteString(v), nil
	}
	return readOptString(d)
}

func readHTTPTrigger(d *jsontext.Decoder, scratch *hotScratch) (*httpTrigger, error) {
	var t *httpTrigger
	if scratch != nil {
		t = &scratch.trig // an earlier binding of the same name is dropped: the last one wins
		*t = httpTrigger{}
	} else {
		t = &httpTrigger{}
	}
	var body, bodyText []byte
	bodyFresh := false
	err := readObject(d, func(key []byte) error {
		var err error
		switch triggerFieldOf(key) {
		case fieldURL:
			t.URL, err = readOptString(d)
		case fieldMethod:
			t.Method, err = readMethod(d)
		case fieldQuery:
			t.Query, err = readQuery(d)
		case fieldIdentities:
			var v jsontext.Value
			v, err = d.ReadValue()
			t.Identities = nil
			if err == nil && v.Kind() != 'n' {
				t.Identities = bytes.Clone(v) // the payload buffer is reused
			}
		case fieldBody:
			body, bodyText = nil, nil
			var v jsontext.Value
			if v, err = d.ReadValue(); err != nil {
				return err
			}
			switch {
			case v.Kind() == '"' && scratch != nil:
				bodyText, bodyFresh = unquoteInto(&scratch.body, v), true // may alias the payload: see decodeHTTPInvocationBody
				if bodyText == nil {
					bodyText = []byte{}
				}
			case v.Kind() == '"':
				bodyText, bodyFresh = unquote(v)
				if bodyText == nil {
					bodyText = []byte{}
				}
			default:
				body = v // aliases the payload, which outlives the decode
			}
		case fieldParams:
			t.Params, err = readParams(d)
		case fieldHeaders:
			if scratch != nil {
				t.header, err = readCanonicalHeaders(d, scratch)
			} else {
				t.Headers, err = readHeaders(d)
			}
		default:
			err = d.SkipValue()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	t.Method = strings.ToUpper(t.Method)
	switch {
	case bodyText != nil && isBinaryMediaType(t.contentType()):
		b, err := base64.StdEncoding.AppendDecode(nil, bodyText)
		if err != nil {
			return nil, errBodyNotBase64
		}
		t.Body = b
	case bodyText != nil && bodyFresh:
		t.Body = bodyText
	case bodyText != nil:
		t.Body = bytes.Clone(bodyText) // aliases the payload buffer, which is reused
	case len(body) > 0 && string(body) != "null":
		t.Body = bytes.Clone(body)
	}
	return t, nil
}

// The members of an httpTrigger the reader keeps.
const (
	fieldOther = iota
	fieldURL
	fieldMethod
	fieldQuery
	fieldHeaders
	fieldParams
	fieldIdentities
	fieldBody
)

// triggerFields are the members' names, as encoding/json matches them: case-insensitively.
var triggerFields = [...]string{fieldURL: "Url", fieldMethod: "Method", fieldQuery: "Query",
	fieldHeaders: "Headers", fieldParams: "Params", fieldIdentities: "Identities", fieldBody: "Body"}

// triggerFieldOf returns the member key names: its name as the host spells it is found at
// once, any other spelling by comparing it with each name.
func triggerFieldOf(key []byte) int {
	switch string(key) {
	case "Url":
		return fieldURL
	case "Method":
		return fieldMethod
	case "Query":
		return fieldQuery
	case "Headers":
		return fieldHeaders
	case "Params":
		return fieldParams
	case "Identities":
		return fieldIdentities
	case "Body":
		return fieldBody
	}
	for f := fieldURL; f < len(triggerFields); f++ {
		if bytes.EqualFold(key, []byte(triggerFields[f])) {
			return f
		}
	}
	return fieldOther
}

// readQuery reads Query: an object of strings (or arrays, joined with commas), or a string
// holding such an object.
func readQuery(d *jsontext.Decoder) (map[string]string, error) {
	switch d.PeekKind() {
	case 'n':
		_, err := d.ReadToken()
		return nil, err
	case '"':
		v, err := d.ReadValue()
		if err != nil {
			return nil, err
		}
		return decodeQuery(bytes.Clone(v))
	}
	q := emptyQuery
	err := readObject(d, func(key []byte) error {
		if len(q) == 0 {
			q = map[string]string{}
		}
		k := string(key)
		vals, err := readStringValues(d)
		q[k] = strings.Join(vals, ",")
		return err
	})
	return q, err
}

// emptyQuery and emptyParams are the trigger's Query and Params when the host sends an empty
// object (it does on every request without a query or route parameters): empty, not nil, as
// encoding/json decodes them, and never written (request only reads them).
var (
	emptyQuery  = map[string]string{}
	emptyParams = map[string]*string{}
)

func readParams(d *jsontext.Decoder) (map[string]*string, error) {
	if d.PeekKind() == 'n' {
		_, err := d.ReadToken()
		return nil, err
	}
	m := emptyParams
	err := readObject(d, func(key []byte) error {
		if len(m) == 0 {
			m = map[string]*string{}
		}
		k := string(key)
		v, err := d.ReadValue()
		if err != nil {
			return err
		}
		m[k] = optionalString([]byte(v))
		return nil
	})
	return m, err
}

// readStringValues reads a string, an array of strings, null, or any other value as its text
// (readValues, collected as strings).
func readStringValues(d *jsontext.Decoder) ([]string, error) {
	var vals []string
	err := readValues(d, func(b []byte) { vals = append(vals, string(b)) })
	return vals, err
}

func readHeaders(d *jsontext.Decoder) (map[string][]string, error) {
	if d.PeekKind() == 'n' {
		_, err := d.ReadToken()
		return nil, err
	}
	m := map[string][]string{}
	err := readObject(d, func(key []byte) error {
		k := commonHeaders[string(key)].name
		if k == "" {
			k = string(key)
		}
		vals, err := readStringValues(d)
		m[k] = vals
		return err
	})
	return m, err
}
