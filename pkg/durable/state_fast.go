package durable

import (
	"bytes"
	"encoding"
	"encoding/json"
	"github.com/funcgraph/funcgraph/pkg/internal/jsonenc"
	"reflect"
	"strconv"
)

// The fast paths of decodeField: values of common kinds set without encoding/json, exactly as
// it would set them. Anything else, and every value encoding/json would reject, is left to it.

// fastKind says how setFast reads a field's value without encoding/json.
type fastKind uint8

const (
	fastNone    fastKind = iota // encoding/json only
	fastString                  // string kinds (not json.Number)
	fastBool                    // bool kinds
	fastInt                     // signed integer kinds
	fastUint                    // unsigned integer kinds (not uintptr)
	fastFloat                   // float kinds
	fastStrings                 // slices of string kinds
	fastRaw                     // json.RawMessage
	fastAny                     // empty interfaces
)

var (
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	numberType          = reflect.TypeFor[json.Number]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// customDecoding reports whether encoding/json decodes t with a method of its own.
func customDecoding(t reflect.Type) bool {
	p := reflect.PointerTo(t) // its method set includes t's
	return p.Implements(unmarshalerType) || p.Implements(textUnmarshalerType)
}

// fastKindOf returns the fast kind of a field of type t, and whether t is a pointer to it.
func fastKindOf(t reflect.Type) (k fastKind, ptr bool) {
	if t.Kind() == reflect.Pointer {
		if k, _ := fastKindOf(t.Elem()); k >= fastString && k <= fastFloat && !customDecoding(t) {
			return k, true
		}
		return fastNone, false
	}
	switch {
	case t == rawMessageType:
		return fastRaw, false
	case t == numberType || customDecoding(t):
		return fastNone, false
	}
	switch t.Kind() {
	case reflect.String:
		return fastString, false
	case reflect.Bool:
		return fastBool, false
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fastInt, false
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fastUint, false
	case reflect.Float32, reflect.Float64:
		return fastFloat, false
	case reflect.Slice:
		if e := t.Elem(); e.Kind() == reflect.String && e != numberType && !customDecoding(e) {
			return fastStrings, false
		}
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return fastAny, false
		}
	}
	return fastNone, false
}

// setFast sets fv from raw (valid JSON, not null, not a lax integer) when it can do so
// exactly as encoding/json would without error; it reports false, leaving fv untouched,
// otherwise. Pointers, slices and interfaces are set only when nil: encoding/json decodes
// into what they already hold.
func setFast(f *stateField, fv reflect.Value, raw []byte) bool {
	if !f.fastPtr {
		return setFastValue(f.fast, fv, raw)
	}
	if !fv.IsNil() {
		return false
	}
	p := reflect.New(f.typ.Elem())
	if !setFastValue(f.fast, p.Elem(), raw) {
		return false
	}
	fv.Set(p)
	return true
}

func setFastValue(k fastKind, v reflect.Value, raw []byte) bool {
	switch k {
	case fastString:
		if raw[0] != '"' {
			return false
		}
		v.SetString(jsonenc.UnquoteString(raw))
	case fastBool:
		switch string(raw) {
		case "true":
			v.SetBool(true)
		case "false":
			v.SetBool(false)
		default:
			return false
		}
	case fastInt:
		if !isNumberStart(raw[0]) {
			return false
		}
		n, err := strconv.ParseInt(string(raw), 10, v.Type().Bits())
		if err != nil {
			return false
		}
		v.SetInt(n)
	case fastUint:
		if !isNumberStart(raw[0]) {
			return false
		}
		n, err := strconv.ParseUint(string(raw), 10, v.Type().Bits())
		if err != nil {
			return false
		}
		v.SetUint(n)
	case fastFloat:
		if !isNumberStart(raw[0]) {
			return false
		}
		n, err := strconv.ParseFloat(string(raw), v.Type().Bits())
		if err != nil || v.OverflowFloat(n) {
			return false
		}
		v.SetFloat(n)
	case fastStrings:
		return v.IsNil() && setStrings(v, raw)
	case fastRaw:
		v.SetBytes(append(v.Bytes()[:0], raw...)) // json.RawMessage.UnmarshalJSON
	case fastAny:
		return v.IsNil() && setAny(v, raw)
	default:
		return false
	}
	return true
}

func isNumberStart(c byte) bool { return c == '-' || c >= '0' && c <= '9' }

// setStrings sets the nil slice v from raw when it is an array of strings and nulls (a null
// element is "", as encoding/json leaves a new element). The elements share one allocation.
func setStrings(v reflect.Value, raw []byte) bool {
	if raw[0] != '[' {
		return false
	}
	var textBuf [256]byte
	var endsBuf [32]int
	text, ends := textBuf[:0], endsBuf[:0] // the elements' text, one after another; their ends
	for i := 1; ; {
		if i = skipSpace(raw, i); i == len(raw) {
			return false
		}
		switch {
		case raw[i] == ']' && len(ends) == 0:
			return assignStrings(v, text, ends)
		case raw[i] == '"':
			end := stringEnd(raw, i)
			if end < 0 {
				return false
			}
			text = jsonenc.AppendUnquoted(text, raw[i:end])
			ends = append(ends, len(text))
			i = end
		case bytes.HasPrefix(raw[i:], []byte("null")):
			ends = append(ends, len(text))
			i += len("null")
		default:
			return false
		}
		if i = skipSpace(raw, i); i == len(raw) {
			return false
		}
		switch raw[i] {
		case ',':
			i++
		case ']':
			return assignStrings(v, text, ends)
		default:
			return false
		}
	}
}

// assignStrings sets v, a slice of some string kind, to the strings that end at ends in text.
func assignStrings(v reflect.Value, text []byte, ends []int) bool {
	all := string(text)
	out := make([]string, len(ends))
	start := 0
	for i, end := range ends {
		out[i], start = all[start:end], end
	}
	if p, ok := v.Addr().Interface().(*[]string); ok {
		*p = out
		return true
	}
	sv := reflect.MakeSlice(v.Type(), len(out), len(out))
	for i, s := range out {
		sv.Index(i).SetString(s)
	}
	v.Set(sv)
	return true
}

// stringEnd returns the index just past the JSON string starting at raw[i], or -1.
func stringEnd(raw []byte, i int) int {
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// setAny sets the nil interface v from a scalar raw as encoding/json does (strings, bools,
// float64 numbers); objects and arrays are left to encoding/json.
func setAny(v reflect.Value, raw []byte) bool {
	var x any
	switch c := raw[0]; {
	case c == '"':
		x = jsonenc.UnquoteString(raw)
	case string(raw) == "true":
		x = true
	case string(raw) == "false":
		x = false
	case isNumberStart(c):
		n, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return false
		}
		x = n
	default:
		return false
	}
	v.Set(reflect.ValueOf(x))
	return true
}
