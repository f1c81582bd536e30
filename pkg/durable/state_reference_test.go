package durable

// The map-based state decoder as it was before the one-pass decoder of state_decode.go, kept
// as the reference that TestStateDecode_MatchesReference and FuzzStateDecode hold the new one
// to: the same values and the same errors, for every input.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// refDecode is the former decode: validates a JSON object against the model into ptr (a *S): unknown keys are dropped,
// missing fields keep their defaults, missing required fields and type errors fail.
func refDecode(s *stateSchema, raw []byte, ptr any) error {
	raw = bytes.TrimSpace(raw)
	var obj map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' {
		return s.errorf("", "state must be a JSON object")
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return s.errorf("", "decode state: %v", err)
	}
	rv := reflect.ValueOf(ptr).Elem()
	if s.hasDefaults {
		ptr.(Defaulter).SetDefaults()
	}
	for i := range s.fields {
		f := &s.fields[i]
		fraw, ok := obj[f.name]
		if !ok {
			if f.required {
				return s.errorf(f.name, "field required")
			}
			continue
		}
		if err := refDecodeField(s, f, rv.Field(f.index), fraw); err != nil {
			return err
		}
	}
	return s.finish(rv, ptr)
}

// refDecodeField is the former decodeField: decodes one top-level value into fv, with null checks and lax integers.
func refDecodeField(s *stateSchema, f *stateField, fv reflect.Value, raw json.RawMessage) error {
	if string(raw) == "null" {
		if !f.nullable {
			return s.errorf(f.name, "null is not allowed for %v", f.typ)
		}
		fv.SetZero()
		return nil
	}
	if f.intKind && len(raw) > 0 && (raw[0] == '"' || bytes.ContainsAny(raw, ".eE")) {
		target := fv
		if f.typ.Kind() == reflect.Pointer {
			target = reflect.New(f.typ.Elem()).Elem()
		}
		if err := refSetLaxInt(s, f, target, raw); err != nil {
			return err
		}
		if f.typ.Kind() == reflect.Pointer {
			fv.Set(target.Addr())
		}
		return nil
	}
	if err := json.Unmarshal(raw, fv.Addr().Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field != "" {
				return s.errorf(f.name, "%s: expected %v, got JSON %s", te.Field, te.Type, te.Value)
			}
			return s.errorf(f.name, "expected %v, got JSON %s", te.Type, te.Value)
		}
		return s.errorf(f.name, "%v", err)
	}
	return nil
}

// refSetLaxInt is the former setLaxInt: accepts a JSON string holding an integer or an integral number for an integer
// field ("2" → 2, 2.0 → 2; parity: docs/lineage.md).
func refSetLaxInt(s *stateSchema, f *stateField, target reflect.Value, raw json.RawMessage) error {
	var text string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return s.errorf(f.name, "%v", err)
		}
		text = strings.TrimSpace(text)
	} else {
		fl, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || fl != math.Trunc(fl) || math.IsInf(fl, 0) {
			return s.errorf(f.name, "expected an integer, got %s", raw)
		}
		text = strconv.FormatFloat(fl, 'f', -1, 64)
	}
	if target.CanInt() {
		n, err := strconv.ParseInt(text, 10, target.Type().Bits())
		if err != nil {
			return s.errorf(f.name, "expected an integer, got %s", raw)
		}
		target.SetInt(n)
		return nil
	}
	n, err := strconv.ParseUint(text, 10, target.Type().Bits())
	if err != nil {
		return s.errorf(f.name, "expected a non-negative integer, got %s", raw)
	}
	target.SetUint(n)
	return nil
}

// refSetValue is the former setValue: assigns a Go value from an Update to a field: directly when the types allow it,
// otherwise through JSON with the same rules as decode.
func refSetValue(s *stateSchema, f *stateField, fv reflect.Value, v any) error {
	if v == nil {
		if !f.nullable {
			return s.errorf(f.name, "null is not allowed for %v", f.typ)
		}
		fv.SetZero()
		return nil
	}
	if vv := reflect.ValueOf(v); vv.Type().AssignableTo(f.typ) {
		fv.Set(vv)
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return s.errorf(f.name, "encode value: %v", err)
	}
	return refDecodeField(s, f, fv, raw)
}

// refMerge is the former merge: applies a handler or event result to cur, the addressable current state.
// ptr is cur's address as a *S, for the Validator assertion.
func refMerge(s *stateSchema, cur reflect.Value, ptr any, result any) error {
	switch r := result.(type) {
	case nil:
		return nil
	case map[string]any:
		if err := refCheckUpdateKeys(s, refMapKeys(r)); err != nil {
			return err
		}
		// Fields in declaration order, so that with several bad values the error is always
		// the same one.
		for i := range s.fields {
			f := &s.fields[i]
			v, ok := r[f.name]
			if !ok {
				continue
			}
			if err := refSetValue(s, f, cur.Field(f.index), v); err != nil {
				return err
			}
		}
		return s.finish(cur, ptr)
	case json.RawMessage:
		raw := bytes.TrimSpace(r)
		if len(raw) == 0 || string(raw) == "null" {
			return nil
		}
		if raw[0] != '{' {
			return newError(ErrUnsupportedResult, "unsupported state merge result: json.RawMessage")
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return s.errorf("", "decode update: %v", err)
		}
		if err := refCheckUpdateKeys(s, refMapKeys(obj)); err != nil {
			return err
		}
		for i := range s.fields {
			f := &s.fields[i]
			fraw, ok := obj[f.name]
			if !ok {
				continue
			}
			if err := refDecodeField(s, f, cur.Field(f.index), fraw); err != nil {
				return err
			}
		}
		return s.finish(cur, ptr)
	}
	rv := reflect.ValueOf(result)
	switch {
	case rv.Type() == s.typ:
		cur.Set(rv)
		return s.finish(cur, ptr)
	case rv.Type() == reflect.PointerTo(s.typ):
		if rv.IsNil() {
			return nil
		}
		cur.Set(rv.Elem())
		return s.finish(cur, ptr)
	}
	return newError(ErrUnsupportedResult, fmt.Sprintf("unsupported state merge result: %T", result))
}

// refCheckUpdateKeys is the former checkUpdateKeys: fails on the first (sorted) update key that names no state field, so that a
// misspelt key fails the run naming it instead of being dropped.
func refCheckUpdateKeys(s *stateSchema, keys []string) error {
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := s.byName[k]; !ok {
			return s.errorf(k, unknownUpdateKey)
		}
	}
	return nil
}

func refMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// refCheck is the former check: is decode that reports every field problem instead of the first one.
func refCheck(s *stateSchema, raw []byte, ptr any) error {
	issues := func(is ...StateIssue) error { return &StateErrors{Model: s.name, Issues: is} }
	raw = bytes.TrimSpace(raw)
	var obj map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return issues(StateIssue{Msg: "state must be a JSON object"})
	}
	rv := reflect.ValueOf(ptr).Elem()
	if s.hasDefaults {
		ptr.(Defaulter).SetDefaults()
	}
	var found []StateIssue
	for i := range s.fields {
		f := &s.fields[i]
		fraw, ok := obj[f.name]
		if !ok {
			if f.required {
				found = append(found, StateIssue{Field: f.name, Msg: "field required"})
			}
			continue
		}
		if err := refDecodeField(s, f, rv.Field(f.index), fraw); err != nil {
			found = append(found, issueOf(f.name, err))
		}
	}
	if len(found) > 0 {
		return issues(found...)
	}
	if err := s.finish(rv, ptr); err != nil {
		return issues(issueOf("", err))
	}
	return nil
}
