package engine

import "bytes"

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
	if !ok || !p.lit("}") || len(p.b) != 0 {
		return false
	}
	*it = w
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
