package funchost

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// decodeInvocation is the invocation reader of the payload path; a variable so the jsontext
// comparison (jsontext_compare_test.go) can measure the whole path with its reader.
var decodeInvocation = decodeHTTPInvocation

// decodeHTTPInvocation reads `{"Data": {"<binding>": <httpTrigger>}, ...}` in one pass,
// skipping (but validating) everything else, and returns the decoded trigger (nil when the
// binding is missing or null).
func decodeHTTPInvocation(data []byte, binding string) (*HTTPTrigger, error) {
	r := &jsonReader{data: data}
	var trig *HTTPTrigger
	err := r.object(func(key []byte) error {
		if !bytes.EqualFold(key, []byte("Data")) {
			return r.skip(0)
		}
		if r.peek() == 'n' {
			trig = nil // like encoding/json: a later null Data clears the bindings
			return r.literal("null")
		}
		return r.object(func(key []byte) error {
			if !bytes.EqualFold(key, []byte(binding)) {
				return r.skip(0)
			}
			if r.peek() == 'n' {
				trig = nil
				return r.literal("null")
			}
			t, err := r.httpTrigger()
			trig = t
			return err
		})
	})
	if r.ws(); err == nil && r.pos != len(r.data) {
		err = errSyntax // trailing data
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadInvocation, err)
	}
	if trig == nil {
		return nil, nil
	}
	if trig.Method == "" {
		return nil, fmt.Errorf("%w: http trigger has no Method", ErrBadInvocation)
	}
	return trig, nil
}

func (r *jsonReader) optString() (string, error) {
	if r.peek() == 'n' {
		return "", r.literal("null")
	}
	b, err := r.stringBytes()
	return string(b), err
}

func (r *jsonReader) httpTrigger() (*HTTPTrigger, error) {
	t := &HTTPTrigger{}
	var body json.RawMessage
	var bodyText []byte
	bodyFresh := false
	err := r.object(func(key []byte) error {
		var err error
		switch {
		case bytes.EqualFold(key, []byte("Url")):
			t.URL, err = r.optString()
		case bytes.EqualFold(key, []byte("Method")):
			t.Method, err = r.optString()
		case bytes.EqualFold(key, []byte("Query")):
			t.Query, err = r.query()
		case bytes.EqualFold(key, []byte("Identities")):
			t.Identities, err = r.raw()
			if string(t.Identities) == "null" {
				t.Identities = nil
			}
			t.Identities = bytes.Clone(t.Identities) // the input buffer is reused
		case bytes.EqualFold(key, []byte("Body")):
			body, bodyText = nil, nil
			if r.peek() == '"' {
				start := r.pos
				bodyText, err = r.stringBytes()
				bodyFresh = err == nil && !aliases(r.data[start:r.pos], bodyText)
				if err == nil && bodyText == nil {
					bodyText = []byte{}
				}
			} else {
				body, err = r.raw()
			}
		case bytes.EqualFold(key, []byte("Params")):
			t.Params, err = r.params()
		case bytes.EqualFold(key, []byte("Headers")):
			t.Headers, err = r.headers()
		default:
			err = r.skip(0)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	t.Method = strings.ToUpper(t.Method)
	if bodyText != nil {
		if isBinaryMediaType(headerValue(t.Headers, "Content-Type")) {
			b, err := base64.StdEncoding.AppendDecode(nil, bodyText)
			if err != nil {
				return nil, errors.New("body is not base64")
			}
			t.Body = b
		} else if bodyFresh {
			t.Body = bodyText
		} else {
			t.Body = bytes.Clone(bodyText) // aliases the input buffer, which is reused
		}
	} else if len(body) > 0 && string(body) != "null" {
		t.Body = bytes.Clone(body)
	}
	return t, nil
}

// query reads Query: an object of strings (or arrays, joined with commas), or a string holding
// such an object.
func (r *jsonReader) query() (map[string]string, error) {
	switch r.peek() {
	case 'n':
		return nil, r.literal("null")
	case '"':
		raw, err := r.raw()
		if err != nil {
			return nil, err
		}
		return decodeQuery(raw)
	}
	q := map[string]string{}
	err := r.object(func(key []byte) error {
		vals, err := r.stringValues()
		q[string(key)] = strings.Join(vals, ",")
		return err
	})
	return q, err
}

func (r *jsonReader) params() (map[string]*string, error) {
	if r.peek() == 'n' {
		return nil, r.literal("null")
	}
	m := map[string]*string{}
	err := r.object(func(key []byte) error {
		raw, err := r.raw()
		m[string(key)] = optionalString(raw)
		return err
	})
	return m, err
}

// stringValues reads a string, an array of strings, null, or any other value as its text.
func (r *jsonReader) stringValues() ([]string, error) {
	switch r.peek() {
	case '[':
		var vals []string
		err := r.array(func() error {
			s, err := r.stringBytes()
			vals = append(vals, string(s))
			return err
		})
		return vals, err
	case '"':
		s, err := r.stringBytes()
		return []string{string(s)}, err
	case 'n':
		return nil, r.literal("null")
	}
	raw, err := r.raw()
	return []string{string(raw)}, err
}

func (r *jsonReader) headers() (map[string][]string, error) {
	if r.peek() == 'n' {
		return nil, r.literal("null")
	}
	m := map[string][]string{}
	err := r.object(func(key []byte) error {
		vals, err := r.stringValues()
		m[string(key)] = vals
		return err
	})
	return m, err
}

// aliases reports whether b points into region.
func aliases(region, b []byte) bool {
	if len(b) == 0 || len(region) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&region[0]))
	return p >= lo && p < lo+uintptr(len(region))
}
