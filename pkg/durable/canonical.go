package durable

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// maxCanonicalDepth bounds nesting so that a self-referencing metadata map fails instead of
// recursing forever (Python reports "Circular reference detected" in the same situation).
const maxCanonicalDepth = 512

// errCanonicalDepth is returned when a value nests deeper than maxCanonicalDepth.
var errCanonicalDepth = errors.New("value nests too deeply (circular reference?)")

// appendCanonical appends the canonical JSON form of v: keys sorted at every
// depth, no whitespace, Python ensure_ascii string escaping, Python float repr, integers kept
// distinct from floats (parity: docs/lineage.md). v may be any value encoding/json accepts;
// json.Number and json.RawMessage keep the int/float distinction of their source text.
func appendCanonical(dst []byte, v any) ([]byte, error) {
	return appendCanonicalDepth(dst, v, 0)
}

func appendCanonicalDepth(dst []byte, v any, depth int) ([]byte, error) {
	if depth > maxCanonicalDepth {
		return dst, errCanonicalDepth
	}
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case string:
		return pyjson.AppendString(dst, x), nil
	case json.Number:
		return appendNumber(dst, string(x))
	case json.RawMessage:
		return appendRawCanonical(dst, x, depth)
	case float64:
		return appendPyFloat(dst, x), nil
	case float32:
		return appendPyFloat(dst, float64(x)), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case map[string]any:
		return appendCanonicalMap(dst, x, depth)
	case []any:
		if x == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanonicalDepth(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case []string:
		if x == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = pyjson.AppendString(dst, e)
		}
		return append(dst, ']'), nil
	case json.Marshaler:
		return appendViaJSON(dst, v, depth)
	}
	return appendCanonicalReflect(dst, reflect.ValueOf(v), depth)
}

// appendCanonicalReflect handles maps with string keys, slices, arrays and pointers of any
// element type; everything else (structs, non-string map keys, marshalers) goes through
// encoding/json and is re-read with json.Number.
func appendCanonicalReflect(dst []byte, rv reflect.Value, depth int) ([]byte, error) {
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return append(dst, "null"...), nil
		}
		return appendCanonicalDepth(dst, rv.Elem().Interface(), depth+1)
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			break
		}
		if rv.IsNil() {
			return append(dst, "null"...), nil
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		keyType := rv.Type().Key()
		return appendSortedObject(dst, keys, func(k string) any {
			return rv.MapIndex(reflect.ValueOf(k).Convert(keyType)).Interface()
		}, depth)
	case reflect.Slice, reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			break // []byte is base64 text in encoding/json
		}
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for i := range rv.Len() {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanonicalDepth(dst, rv.Index(i).Interface(), depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case reflect.String:
		return pyjson.AppendString(dst, rv.String()), nil
	case reflect.Bool:
		return appendCanonicalDepth(dst, rv.Bool(), depth)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.AppendInt(dst, rv.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.AppendUint(dst, rv.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return appendPyFloat(dst, rv.Float()), nil
	case reflect.Invalid:
		return append(dst, "null"...), nil
	}
	return appendViaJSON(dst, rv.Interface(), depth)
}

func appendCanonicalMap(dst []byte, m map[string]any, depth int) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return appendSortedObject(dst, keys, func(k string) any { return m[k] }, depth)
}

// appendSortedObject writes an object whose members are keys (sorted here) and value(key).
func appendSortedObject(dst []byte, keys []string, value func(string) any, depth int) ([]byte, error) {
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = pyjson.AppendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendCanonicalDepth(dst, value(k), depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendViaJSON encodes v with encoding/json and canonicalises the result.
func appendViaJSON(dst []byte, v any, depth int) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return appendRawCanonical(dst, raw, depth)
}

// appendRawCanonical decodes JSON text keeping numbers as json.Number and canonicalises it.
func appendRawCanonical(dst []byte, raw []byte, depth int) ([]byte, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return dst, fmt.Errorf("decode json: %w", err)
	}
	if dec.More() {
		return dst, errors.New("decode json: trailing data")
	}
	return appendCanonicalDepth(dst, v, depth+1)
}

// appendNumber writes a JSON number literal: integers as plain digits (any size), numbers with
// a fraction or exponent as Python floats.
func appendNumber(dst []byte, s string) ([]byte, error) {
	if !isJSONNumber(s) {
		return dst, fmt.Errorf("invalid number literal %q", s)
	}
	if strings.ContainsAny(s, ".eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return dst, fmt.Errorf("parse float %q: %w", s, err)
		}
		return appendPyFloat(dst, f), nil // out of range: ±Inf, like Python's float()
	}
	if s == "-0" {
		return append(dst, '0'), nil
	}
	return append(dst, s...), nil
}

// isJSONNumber reports whether s is a number literal in the JSON grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// appendPyFloat writes f like Python's float repr: shortest round-trip digits, fixed notation
// with a mandatory fractional part when the decimal exponent is in [-4, 16), otherwise
// d[.ddd]e±XX.
func appendPyFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	ePos := strings.LastIndexByte(string(e), 'e')
	exp, _ := strconv.Atoi(string(e[ePos+1:]))
	if exp >= -4 && exp < 16 {
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'f', -1, 64)
		if !strings.ContainsRune(string(dst[start:]), '.') {
			dst = append(dst, ".0"...)
		}
		return dst
	}
	// Go's 'e' format already writes a sign and at least two exponent digits.
	return append(dst, e...)
}
