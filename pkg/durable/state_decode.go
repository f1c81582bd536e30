package durable

import (
	"bytes"
	"encoding/json"
	"github.com/funcgraph/funcgraph/pkg/internal/jsonenc"
	"io"
	"reflect"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// This file holds the hot path of every step: reading a state object into the model. The
// object is read in one pass with a pooled jsontext.Decoder, which keeps, for each model field,
// the raw text of its value (the last one when a key repeats) and skips the rest, validating
// it; common field kinds are then set without encoding/json, everything else (and every value
// that would be an error) goes through encoding/json as before. The result, including every
// error text, is that of the map-based decoder it replaces: FuzzStateDecode checks it against
// that decoder, kept in state_reference_test.go.

// scanOptions are encoding/json's rules: duplicate names allowed (the last wins), invalid UTF-8
// allowed (replaced by U+FFFD). jsontext's nesting limit is encoding/json's 10 000 levels.
var scanOptions = []jsontext.Options{
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
}

// stateScanner is a pooled decoder over a pooled bytes.Buffer: jsontext reads a *bytes.Buffer
// in place, so the values it returns alias the state text.
type stateScanner struct {
	dec jsontext.Decoder
	buf bytes.Buffer
}

var scannerPool = sync.Pool{New: func() any { return new(stateScanner) }}

// maxStackFields is the number of model fields whose values decode keeps on the stack.
const maxStackFields = 16

// fieldValues is the raw text of each model field's value in a state object, by field
// position; nil when the key is absent.
type fieldValues [][]byte

// slots returns a fieldValues for the model in stack when it fits.
func (s *stateSchema) slots(stack *[maxStackFields][]byte) fieldValues {
	if len(s.fields) <= maxStackFields {
		return stack[:len(s.fields)]
	}
	return make(fieldValues, len(s.fields))
}

// values reads the JSON object raw (starting with '{', no surrounding space) into vals, which
// has one entry per field. With unknown, it also returns the smallest key that names no field
// (found false when there is none), for merge's unknown-key check. A malformed object returns
// encoding/json's error, the text the map-based decoder reported.
func (s *stateSchema) values(raw []byte, vals fieldValues, unknown bool) (minUnknown string, found bool, err error) {
	clear(vals)
	if minUnknown, found, ok := s.scan(raw, vals, unknown); ok {
		return minUnknown, found, nil
	}
	// Not one valid object for jsontext: let encoding/json say why (or, should it accept
	// what jsontext did not, decode as it always did).
	clear(vals)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", false, err
	}
	for i := range s.fields {
		if v, ok := obj[s.fields[i].name]; ok {
			vals[i] = v
		}
	}
	if unknown {
		for k := range obj {
			if _, known := s.byName[k]; !known && (!found || k < minUnknown) {
				minUnknown, found = k, true
			}
		}
	}
	return minUnknown, found, nil
}

// scan is values' one pass; ok is false when raw is not exactly one valid JSON object.
func (s *stateSchema) scan(raw []byte, vals fieldValues, unknown bool) (minUnknown string, found, ok bool) {
	sc := scannerPool.Get().(*stateScanner)
	sc.buf = *bytes.NewBuffer(raw)
	sc.dec.Reset(&sc.buf, scanOptions...)
	minUnknown, found, ok = s.readObject(&sc.dec, vals, unknown)
	if ok {
		_, err := sc.dec.ReadToken()
		ok = err == io.EOF // nothing but space after the object
	}
	// The decoder still refers to raw until its next Reset (or until the pool drops it at a
	// garbage collection): a second Reset here would cost as much as the first.
	sc.buf = bytes.Buffer{}
	scannerPool.Put(sc)
	return minUnknown, found, ok
}

// readObject reads the object at d for scan.
func (s *stateSchema) readObject(d *jsontext.Decoder, vals fieldValues, unknown bool) (minUnknown string, found, ok bool) {
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", false, false
	}
	var keyBuf [64]byte
	for d.PeekKind() != '}' {
		name, err := d.ReadValue()
		if err != nil {
			return "", false, false
		}
		key := jsonenc.Unquote(keyBuf[:0], name)
		i, known := s.fieldIndex(key)
		if !known {
			if unknown && (!found || string(key) < minUnknown) {
				minUnknown, found = string(key), true
			}
			if d.SkipValue() != nil {
				return "", false, false
			}
			continue
		}
		v, err := d.ReadValue()
		if err != nil {
			return "", false, false
		}
		vals[i] = v
	}
	_, err := d.ReadToken()
	return minUnknown, found, err == nil
}

// fieldIndex returns the position of the field named key: by comparing names for small
// models, where that is faster than hashing.
func (s *stateSchema) fieldIndex(key []byte) (int, bool) {
	if len(s.fields) > 8 {
		i, ok := s.byName[string(key)]
		return i, ok
	}
	for i := range s.fields {
		if s.fields[i].name == string(key) {
			return i, true
		}
	}
	return 0, false
}

// decode validates a JSON object against the model into ptr (a *S): unknown keys are dropped,
// missing fields keep their defaults, missing required fields and type errors fail.
func (s *stateSchema) decode(raw []byte, ptr any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return s.errorf("", "state must be a JSON object")
	}
	var stack [maxStackFields][]byte
	vals := s.slots(&stack)
	if _, _, err := s.values(raw, vals, false); err != nil {
		return s.errorf("", "decode state: %v", err)
	}
	rv := reflect.ValueOf(ptr).Elem()
	if s.hasDefaults {
		ptr.(Defaulter).SetDefaults()
	}
	for i := range s.fields {
		f := &s.fields[i]
		if vals[i] == nil {
			if f.required {
				return s.errorf(f.name, "field required")
			}
			continue
		}
		if err := s.decodeField(f, rv.Field(f.index), vals[i]); err != nil {
			return err
		}
	}
	return s.finish(rv, ptr)
}
