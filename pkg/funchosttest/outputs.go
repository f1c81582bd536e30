package funchosttest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// applyOutputs writes the non-http output bindings of a successful invocation. Queue outputs
// go to the storage queue of the binding's connection when it is configured, otherwise to the
// in-memory queues; other binding types are logged and ignored.
func (e *Emulator) applyOutputs(f *function, res *invocationResult) error {
	for _, b := range f.Bindings {
		if !strings.EqualFold(b.Direction, "out") || strings.EqualFold(b.Type, "http") {
			continue
		}
		raw, ok := res.output(b.Name)
		if !ok {
			continue
		}
		if !strings.EqualFold(b.Type, "queue") {
			e.logf("funchosttest: %s: output binding %q of type %q is not emulated", f.Name, b.Name, b.Type)
			continue
		}
		msgs, err := outputMessages(raw, strings.EqualFold(b.DataType, "binary"))
		if err != nil {
			return fmt.Errorf("output %s: %w", b.Name, err)
		}
		for _, m := range msgs {
			if err := e.enqueueOutput(b, e.encodeForQueue(m)); err != nil {
				return fmt.Errorf("output %s: %w", b.Name, err)
			}
		}
	}
	return nil
}

// outputMessages turns a queue output value into message contents: a string is one message,
// an array several (each element by the same rules), an object its JSON. Unless binary is set,
// a string that decodes as base64 is replaced by the decoded bytes — the host's quirk that
// corrupts plain strings such as "test".
func outputMessages(raw json.RawMessage, binary bool) ([][]byte, error) {
	raw = bytes.TrimSpace(raw)
	switch raw[0] {
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		var out [][]byte
		for _, it := range items {
			if it = bytes.TrimSpace(it); len(it) == 0 || string(it) == "null" {
				continue
			}
			ms, err := outputMessages(it, binary)
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
		}
		return out, nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		if !binary {
			if b, ok := base64Quirk(s); ok {
				return [][]byte{b}, nil
			}
		}
		return [][]byte{[]byte(s)}, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return [][]byte{buf.Bytes()}, nil
}

// base64Quirk reports what the host does to a string output value of a non-binary, non-http
// binding: if s decodes as base64, the decoded bytes are written instead of s. Like .NET's
// Convert.FromBase64String, white space (space, tab, CR, LF) anywhere is ignored.
func base64Quirk(s string) ([]byte, bool) {
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, s)
	if s == "" {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	return b, true
}

// encodeForQueue is what the queue output binding stores: base64 text unless
// messageEncoding is none.
func (e *Emulator) encodeForQueue(content []byte) string {
	if e.cfg.MessageEncoding == "none" {
		return string(content)
	}
	return base64.StdEncoding.EncodeToString(content)
}
