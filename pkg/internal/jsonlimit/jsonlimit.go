package jsonlimit

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Violations Check reports.
var (
	// ErrTooDeep reports a value nested deeper than the depth cap.
	ErrTooDeep = errors.New("jsonlimit: value nested too deep")
	// ErrTooManyNodes reports more member values and array items than the node cap.
	ErrTooManyNodes = errors.New("jsonlimit: value has too many nodes")
	// ErrInvalid reports a value that is not JSON.
	ErrInvalid = errors.New("jsonlimit: not a JSON value")
)

// Check walks raw depth-first in document order and returns the first violation: a value
// deeper than maxDepth (a top-level container is depth 1, its members depth 2) is ErrTooDeep;
// the member value or array item that takes the count past maxNodes is ErrTooManyNodes
// (maxNodes <= 0: no count cap); a value that does not parse is ErrInvalid. A scalar always
// passes. The walk keeps one frame per open container, never a copy of the value.
func Check(raw []byte, maxDepth, maxNodes int) error {
	if v := bytes.TrimLeft(raw, " \t\r\n"); len(v) == 0 || (v[0] != '{' && v[0] != '[') {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		object  bool
		wantKey bool
	}
	var stack []frame
	count := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return ErrInvalid
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if n := len(stack); n > 0 {
			top := &stack[n-1]
			if top.object && top.wantKey {
				top.wantKey = false // tok is a key
				continue
			}
			if top.object {
				top.wantKey = true
			}
			count++
			if maxNodes > 0 && count > maxNodes {
				return ErrTooManyNodes
			}
			if n+1 > maxDepth {
				return ErrTooDeep
			}
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
		}
	}
}
