package durable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/internal/jsonenc"
)

// unknownUpdateKey is the StateError reason of an update key that names no state field.
const unknownUpdateKey = "unknown field in update"

// Validator is implemented by state models (on S or *S) that check invariants beyond field
// types. Validate runs after every decode and merge; an error fails the step.
type Validator interface {
	Validate() error
}

// Defaulter is implemented (on *S) by state models whose defaults are not Go zero values.
// SetDefaults runs on a zero S before the incoming fields are decoded over it.
type Defaulter interface {
	SetDefaults()
}

// StateError reports a state that does not validate against its model. It wraps
// ErrInvalidState and, for Validate failures, the model's own error.
type StateError struct {
	// Model is the state model name.
	Model string
	// Field is the JSON name of the offending field, or empty for whole-state problems.
	Field string
	// Reason says what is wrong.
	Reason string
	// Err is the model's Validate error, if that is the cause.
	Err error
}

// Error returns "validate state <model>: [field '<f>': ]<reason>".
func (e *StateError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("validate state %s: field '%s': %s", e.Model, e.Field, e.Reason)
	}
	return fmt.Sprintf("validate state %s: %s", e.Model, e.Reason)
}

// Unwrap returns ErrInvalidState and the model's error, if any.
func (e *StateError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidState, e.Err}
	}
	return []error{ErrInvalidState}
}

// requiredTag is the struct tag that marks a state field the incoming state must carry:
// `durable:"required"`.
const requiredTag = "required"

// stateField is one top-level field of the state model, cached at Build time.
type stateField struct {
	name     string // JSON name
	index    int    // struct field index
	required bool   // must be present in incoming state
	nullable bool   // accepts JSON null (pointer, interface, map, slice of nullable kinds excluded)
	intKind  bool   // integer field (or pointer to one): lax coercion applies
	empty    bool   // slice or map: missing/nil means empty, dumped as [] or {}
	fast     fastKind
	fastPtr  bool // a pointer to the fast kind
	typ      reflect.Type
}

// stateSchema is the reflected state model.
type stateSchema struct {
	typ          reflect.Type
	name         string
	fields       []stateField
	byName       map[string]int
	hasValidate  bool
	hasDefaults  bool
	hasEmptyDefs bool
}

func isIntKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// newStateSchema reflects S. S must be a struct; its exported fields are the state fields,
// named by their json tag (or Go name), in declaration order.
func newStateSchema(typ reflect.Type) (*stateSchema, error) {
	if typ == nil || typ.Kind() != reflect.Struct {
		return nil, fmt.Errorf("state model must be a struct type, got %v", typ)
	}
	s := &stateSchema{typ: typ, name: typ.Name(), byName: map[string]int{}}
	if s.name == "" {
		return nil, fmt.Errorf("state model must be a named struct type, got %v", typ)
	}
	for i := range typ.NumField() {
		sf := typ.Field(i)
		if sf.Anonymous {
			return nil, fmt.Errorf("state model %s: field %s: embedded fields are not supported", s.name, sf.Name)
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" {
			return nil, fmt.Errorf("state model %s: field %s: json options %q are not supported (every field is dumped)", s.name, sf.Name, opts)
		}
		if name == "" {
			name = sf.Name
		}
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("state model %s: duplicate field name '%s'", s.name, name)
		}
		f := stateField{name: name, index: i, typ: sf.Type}
		f.fast, f.fastPtr = fastKindOf(sf.Type)
		for _, o := range strings.Split(sf.Tag.Get("durable"), ",") {
			switch o {
			case requiredTag:
				f.required = true
			case "":
			default:
				return nil, fmt.Errorf("state model %s: field %s: unknown durable tag option %q", s.name, sf.Name, o)
			}
		}
		switch sf.Type.Kind() {
		case reflect.Pointer:
			f.nullable = true
			f.intKind = isIntKind(sf.Type.Elem().Kind())
		case reflect.Interface:
			f.nullable = true
		case reflect.Slice, reflect.Map:
			f.empty = true
			s.hasEmptyDefs = true
		default:
			f.intKind = isIntKind(sf.Type.Kind())
		}
		s.byName[name] = len(s.fields)
		s.fields = append(s.fields, f)
	}
	s.hasValidate = reflect.PointerTo(typ).Implements(reflect.TypeFor[Validator]())
	s.hasDefaults = reflect.PointerTo(typ).Implements(reflect.TypeFor[Defaulter]())
	return s, nil
}

func (s *stateSchema) errorf(field, format string, args ...any) error {
	return &StateError{Model: s.name, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// finish fills empty collections and runs the model's Validate.
func (s *stateSchema) finish(rv reflect.Value, ptr any) error {
	if s.hasEmptyDefs {
		for i := range s.fields {
			f := &s.fields[i]
			if !f.empty {
				continue
			}
			fv := rv.Field(f.index)
			if fv.IsNil() {
				if f.typ.Kind() == reflect.Slice {
					fv.Set(reflect.MakeSlice(f.typ, 0, 0))
				} else {
					fv.Set(reflect.MakeMap(f.typ))
				}
			}
		}
	}
	if s.hasValidate {
		if err := ptr.(Validator).Validate(); err != nil {
			return &StateError{Model: s.name, Reason: err.Error(), Err: err}
		}
	}
	return nil
}

// decodeField decodes one top-level value (valid JSON) into fv, with null checks and lax
// integers.
func (s *stateSchema) decodeField(f *stateField, fv reflect.Value, raw json.RawMessage) error {
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
		if err := s.setLaxInt(f, target, raw); err != nil {
			return err
		}
		if f.typ.Kind() == reflect.Pointer {
			fv.Set(target.Addr())
		}
		return nil
	}
	if f.fast != fastNone && setFast(f, fv, raw) {
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

// setLaxInt accepts a JSON string holding an integer or an integral number for an integer
// field ("2" → 2, 2.0 → 2; parity: docs/lineage.md).
func (s *stateSchema) setLaxInt(f *stateField, target reflect.Value, raw json.RawMessage) error {
	var text string
	if raw[0] == '"' {
		text = strings.TrimSpace(jsonenc.UnquoteString(raw))
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

// setValue assigns a Go value from an Update to a field: directly when the types allow it,
// otherwise through JSON with the same rules as decode.
func (s *stateSchema) setValue(f *stateField, fv reflect.Value, v any) error {
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
	return s.decodeField(f, fv, raw)
}

// merge applies a handler or event result to cur, the addressable current state.
// ptr is cur's address as a *S, for the Validator assertion.
func (s *stateSchema) merge(cur reflect.Value, ptr any, result any) error {
	switch r := result.(type) {
	case nil:
		return nil
	case map[string]any:
		if err := s.checkUpdate(r); err != nil {
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
			if err := s.setValue(f, cur.Field(f.index), v); err != nil {
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
		vals := make(fieldValues, len(s.fields))
		bad, found, err := s.values(raw, vals, true)
		if err != nil {
			return s.errorf("", "decode update: %v", err)
		}
		if found {
			return s.errorf(bad, unknownUpdateKey)
		}
		for i := range s.fields {
			if vals[i] == nil {
				continue
			}
			if err := s.decodeField(&s.fields[i], cur.Field(s.fields[i].index), vals[i]); err != nil {
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
	switch result.(type) {
	case RouteDecision, *RouteDecision:
		// Child runs, fan-outs, waits and sleeps are a route's to decide (WithRoute); a
		// fan-out's branch visits its node only, and follows no route.
		return newError(ErrUnsupportedResult, fmt.Sprintf("unsupported state merge result: %T (a node handler returns a state update; return decisions from the node's route, WithRoute)", result))
	}
	return newError(ErrUnsupportedResult, fmt.Sprintf("unsupported state merge result: %T", result))
}

// checkUpdate fails on the smallest update key that names no state field, so that a
// misspelt key fails the run naming it instead of being dropped.
func (s *stateSchema) checkUpdate(u Update) error {
	var bad string
	found := false
	for k := range u {
		if _, ok := s.byName[k]; !ok && (!found || k < bad) {
			bad, found = k, true
		}
	}
	if found {
		return s.errorf(bad, unknownUpdateKey)
	}
	return nil
}

// dump encodes the state with every model field in declaration order. Slices and maps have
// been made non-nil by finish.
func (s *stateSchema) dump(ptr any) (json.RawMessage, error) {
	out, err := jsonenc.Append(nil, ptr)
	if err != nil {
		return nil, fmt.Errorf("encode state %s: %w", s.name, err)
	}
	return out, nil
}
