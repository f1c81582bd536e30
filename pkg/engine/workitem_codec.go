package engine

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// The form of a queue message (workItem, and a branch's branchWork): written by hand, read by
// one parser (decodeWorkItem) that returns the one or the other.

// encodeWorkItem returns the JSON of it.
func encodeWorkItem(it workItem) []byte {
	return append(appendWorkItem(make([]byte, 0, 96+len(it.RunID)), it), '}')
}

// appendWorkItem appends the JSON of it without its closing brace.
func appendWorkItem(b []byte, it workItem) []byte {
	b = append(b, `{"v":1,"run_id":`...)
	b = appendJSONString(b, it.RunID)
	b = append(b, `,"gen":`...)
	b = append(b, itoa(it.Gen)...)
	b = append(b, `,"step":`...)
	b = append(b, itoa(it.Step)...)
	if it.Nonce != "" {
		b = append(b, `,"nonce":`...)
		b = appendJSONString(b, it.Nonce)
	}
	if it.Retry > 0 {
		b = append(b, `,"retry":`...)
		b = append(b, itoa(it.Retry)...)
	}
	if it.Trace != "" {
		b = append(b, `,"tp":`...)
		b = appendJSONString(b, it.Trace)
	}
	if it.VersionWaits > 0 {
		b = append(b, `,"vw":`...)
		b = append(b, itoa(it.VersionWaits)...)
	}
	if it.Cancel != "" {
		b = append(b, `,"cx":`...)
		b = appendJSONString(b, it.Cancel)
	}
	return b
}

// wireItem is a queue message as encoding/json reads it: a run's work item, and the members
// of a branch's (present on a branch's message only).
type wireItem struct {
	workItem
	Branch        *int64  `json:"br,omitempty"`
	BranchAttempt int64   `json:"ba,omitempty"`
	BranchNode    string  `json:"bn,omitempty"`
	BranchItem    rawJSON `json:"bi,omitempty"`
	BranchResent  int64   `json:"bs,omitempty"`
}

// decodeWorkItem decodes a queue message, raw JSON or its base64 form: a run's work item, or
// a fan-out branch's (branch non-nil; then it is the branch's run part too). Errors:
// errInvalidWorkItem.
func decodeWorkItem(body []byte) (it workItem, branch *branchWork, err error) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] != '{' {
		dec, err := base64.StdEncoding.DecodeString(string(body))
		if err != nil {
			return workItem{}, nil, fmt.Errorf("%w: neither JSON nor base64", errInvalidWorkItem)
		}
		body = bytes.TrimSpace(dec)
	}
	var w wireItem
	if !parseWorkItem(body, &w.workItem) {
		if err := json.Unmarshal(body, &w); err != nil {
			return workItem{}, nil, fmt.Errorf("%w: %v", errInvalidWorkItem, err)
		}
	}
	if !w.valid() {
		return workItem{}, nil, fmt.Errorf("%w: version %d, run %q, gen %d, step %d", errInvalidWorkItem, w.V, w.RunID, w.Gen, w.Step)
	}
	if w.Branch == nil {
		return w.workItem, nil, nil
	}
	return w.workItem, &branchWork{workItem: w.workItem, Index: *w.Branch, Attempt: w.BranchAttempt, Node: w.BranchNode,
		Item: w.BranchItem, Resent: w.BranchResent == 1}, nil
}

// valid reports whether a decoded message is a work item: its run members in range, a cancel's
// due row key of the form writeDueProps gives it, and its branch members none (a run's step
// or a cancel's) or an index, a node and counters not below zero (a branch's, never a
// cancel's).
func (w *wireItem) valid() bool {
	if w.V != 1 || !storableInstanceID(w.RunID) || w.Gen < 1 || w.Step < 0 || w.Retry < 0 || w.VersionWaits < 0 {
		return false
	}
	if w.Cancel != "" && !validDueKey(w.Cancel) {
		return false
	}
	if w.Branch == nil {
		return w.BranchAttempt == 0 && w.BranchNode == "" && w.BranchItem == "" && w.BranchResent == 0
	}
	return w.Cancel == "" && *w.Branch >= 0 && *w.Branch < durable.MaxBranches && w.BranchNode != "" && w.BranchAttempt >= 0 && (w.BranchResent == 0 || w.BranchResent == 1)
}

// parseWorkItem reads body when it has exactly the form encodeWorkItem writes — its keys in
// that order, strings of printable ASCII without escapes, integers of at most 18 digits —
// and reports whether it did; any other body (another producer's, one with escapes) is
// left to encoding/json, which reads these ones the same way. It spares the reflection of
// json.Unmarshal on the path of every work item.
func parseWorkItem(body []byte, it *workItem) bool {
	p := itemParser{b: body}
	var w workItem
	if !p.lit(`{"v":1,"run_id":`) {
		return false
	}
	w.V = 1
	ok := p.str(&w.RunID) && p.lit(`,"gen":`) && p.int(&w.Gen) && p.lit(`,"step":`) && p.int(&w.Step)
	ok = ok && (!p.lit(`,"nonce":`) || p.str(&w.Nonce))
	ok = ok && (!p.lit(`,"retry":`) || p.int(&w.Retry))
	ok = ok && (!p.lit(`,"tp":`) || p.str(&w.Trace))
	ok = ok && (!p.lit(`,"vw":`) || p.int(&w.VersionWaits))
	ok = ok && (!p.lit(`,"cx":`) || p.str(&w.Cancel))
	if !ok || !p.lit("}") || len(p.b) != 0 {
		return false
	}
	*it = w
	return true
}

// validDueKey reports whether s has the form of a due row's key: 15 digits, '-', and 1 to 32
// lowercase hex digits.
func validDueKey(s string) bool {
	if len(s) < 17 || len(s) > 48 || s[15] != '-' {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch {
		case i < 15 && c >= '0' && c <= '9', i == 15, i > 15 && (c >= '0' && c <= '9' || c >= 'a' && c <= 'f'):
		default:
			return false
		}
	}
	return true
}

// itemParser consumes the front of b.
type itemParser struct{ b []byte }

// lit consumes s when b starts with it.
func (p *itemParser) lit(s string) bool {
	if !bytes.HasPrefix(p.b, []byte(s)) {
		return false
	}
	p.b = p.b[len(s):]
	return true
}

// str consumes a JSON string of printable ASCII with no escapes.
func (p *itemParser) str(dst *string) bool {
	if len(p.b) == 0 || p.b[0] != '"' {
		return false
	}
	for i := 1; i < len(p.b); i++ {
		switch c := p.b[i]; {
		case c == '"':
			*dst, p.b = string(p.b[1:i]), p.b[i+1:]
			return true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return false
		}
	}
	return false
}

// int consumes a non-negative JSON integer of at most 18 digits.
func (p *itemParser) int(dst *int64) bool {
	n, i := int64(0), 0
	for ; i < len(p.b) && i < 19 && p.b[i] >= '0' && p.b[i] <= '9'; i++ {
		n = n*10 + int64(p.b[i]-'0')
	}
	if i == 0 || i > 18 || (i > 1 && p.b[0] == '0') {
		return false
	}
	*dst, p.b = n, p.b[i:]
	return true
}
