package durable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// StateIssue is one problem of a state object.
type StateIssue struct {
	// Field is the JSON name of the offending field, or "" for the whole state (not an
	// object, or a failed Validate).
	Field string
	// Msg says what is wrong.
	Msg string
}

// StateErrors lists every problem of a state object, fields in declaration order. It wraps
// ErrInvalidState.
type StateErrors struct {
	// Model is the state model name.
	Model string
	// Issues is never empty.
	Issues []StateIssue
}

// Error returns "validate state <model>: " and every issue, separated by "; ".
func (e *StateErrors) Error() string {
	parts := make([]string, len(e.Issues))
	for i, is := range e.Issues {
		if is.Field != "" {
			parts[i] = "field '" + is.Field + "': " + is.Msg
		} else {
			parts[i] = is.Msg
		}
	}
	return fmt.Sprintf("validate state %s: %s", e.Model, strings.Join(parts, "; "))
}

// Unwrap returns ErrInvalidState.
func (e *StateErrors) Unwrap() error { return ErrInvalidState }

// CheckState implements graphrun.StateChecker.
func (r *registration[S]) CheckState(state json.RawMessage) error {
	if r == nil {
		return errNotBuilt
	}
	var s S
	return r.schema.check(state, &s)
}

// check is decode that reports every field problem instead of the first one.
func (s *stateSchema) check(raw []byte, ptr any) error {
	issues := func(is ...StateIssue) error { return &StateErrors{Model: s.name, Issues: is} }
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return issues(StateIssue{Msg: "state must be a JSON object"})
	}
	var stack [maxStackFields][]byte
	vals := s.slots(&stack)
	if _, _, err := s.values(raw, vals, false); err != nil {
		return issues(StateIssue{Msg: "state must be a JSON object"})
	}
	rv := reflect.ValueOf(ptr).Elem()
	if s.hasDefaults {
		ptr.(Defaulter).SetDefaults()
	}
	var found []StateIssue
	for i := range s.fields {
		f := &s.fields[i]
		if vals[i] == nil {
			if f.required {
				found = append(found, StateIssue{Field: f.name, Msg: "field required"})
			}
			continue
		}
		if err := s.decodeField(f, rv.Field(f.index), vals[i]); err != nil {
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

func issueOf(field string, err error) StateIssue {
	var se *StateError
	if errors.As(err, &se) {
		return StateIssue{Field: se.Field, Msg: se.Reason}
	}
	return StateIssue{Field: field, Msg: err.Error()}
}
