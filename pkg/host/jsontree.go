package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// errInvalidJSON reports a body that is not strict RFC 8259 JSON in UTF-8.
var errInvalidJSON = errors.New("host: invalid JSON")

type nodeKind uint8

const (
	kindNull nodeKind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
	kindMember // an object member: key span plus the index of its value
)

// jsonNode is one value (or object member) of a jsonTree. Children are linked through child
// and next so the tree lives in one slice.
type jsonNode struct {
	kind       nodeKind
	deep       bool  // container whose children were not parsed (beyond the parse depth)
	escapedKey bool  // member key contains escapes
	start, end int32 // value span; for members, the key span without quotes
	child      int32 // first member or item; -1 when none
	next       int32 // next sibling; -1 when none
	val        int32 // members: index of the value node
}

// jsonTree is a parsed JSON document that keeps document order and the Python dict semantics
// of duplicate keys: a repeated key keeps its first position and takes the last value.
type jsonTree struct {
	src   []byte
	nodes []jsonNode
	root  int32
}

// parseStrict parses a request body. It fails with errInvalidJSON for an empty body, a BOM,
// invalid UTF-8, NaN/Infinity or anything else that is not RFC 8259 JSON. Containers nested
// deeper than maxParseDepth (top level = 1) are recorded but not expanded.
func parseStrict(src []byte, maxParseDepth int) (*jsonTree, error) {
	if !utf8.Valid(src) || !json.Valid(src) {
		return nil, errInvalidJSON
	}
	t := &jsonTree{src: src, nodes: make([]jsonNode, 0, 16)}
	p := parser{t: t, maxDepth: maxParseDepth}
	p.skipWS()
	t.root = p.value(1)
	return t, nil
}

type parser struct {
	t        *jsonTree
	pos      int
	maxDepth int
}

func (p *parser) skipWS() {
	src := p.t.src
	for p.pos < len(src) {
		switch src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) add(n jsonNode) int32 {
	p.t.nodes = append(p.t.nodes, n)
	return int32(len(p.t.nodes) - 1)
}

// value parses the value at p.pos (already past whitespace) and returns its node index. The
// source is known to be valid JSON.
func (p *parser) value(depth int) int32 {
	src := p.t.src
	start := p.pos
	switch c := src[p.pos]; {
	case c == '{' || c == '[':
		kind := kindArray
		if c == '{' {
			kind = kindObject
		}
		idx := p.add(jsonNode{kind: kind, start: int32(start), child: -1, next: -1, val: -1})
		if depth > p.maxDepth {
			p.skipValue()
			p.t.nodes[idx].deep = true
		} else if kind == kindObject {
			p.object(idx, depth)
		} else {
			p.array(idx, depth)
		}
		p.t.nodes[idx].end = int32(p.pos)
		return idx
	case c == '"':
		p.skipString()
		return p.add(jsonNode{kind: kindString, start: int32(start), end: int32(p.pos), child: -1, next: -1, val: -1})
	case c == 't':
		p.pos += 4
		return p.add(jsonNode{kind: kindBool, start: int32(start), end: int32(p.pos), child: -1, next: -1, val: -1})
	case c == 'f':
		p.pos += 5
		return p.add(jsonNode{kind: kindBool, start: int32(start), end: int32(p.pos), child: -1, next: -1, val: -1})
	case c == 'n':
		p.pos += 4
		return p.add(jsonNode{kind: kindNull, start: int32(start), end: int32(p.pos), child: -1, next: -1, val: -1})
	default:
		for p.pos < len(src) && isNumberByte(src[p.pos]) {
			p.pos++
		}
		return p.add(jsonNode{kind: kindNumber, start: int32(start), end: int32(p.pos), child: -1, next: -1, val: -1})
	}
}

func (p *parser) array(idx int32, depth int) {
	p.pos++ // [
	p.skipWS()
	last := int32(-1)
	if p.t.src[p.pos] == ']' {
		p.pos++
		return
	}
	for {
		v := p.value(depth + 1)
		if last < 0 {
			p.t.nodes[idx].child = v
		} else {
			p.t.nodes[last].next = v
		}
		last = v
		p.skipWS()
		if p.t.src[p.pos] == ',' {
			p.pos++
			p.skipWS()
			continue
		}
		p.pos++ // ]
		return
	}
}

// dedupMapThreshold is the member count above which duplicate keys are found with a map.
const dedupMapThreshold = 16

func (p *parser) object(idx int32, depth int) {
	p.pos++ // {
	p.skipWS()
	if p.t.src[p.pos] == '}' {
		p.pos++
		return
	}
	last := int32(-1)
	var members []int32
	var byKey map[string]int32
	for {
		keyStart := p.pos + 1
		p.skipString()
		keyEnd := p.pos - 1
		escaped := bytes.IndexByte(p.t.src[keyStart:keyEnd], '\\') >= 0
		p.skipWS()
		p.pos++ // :
		p.skipWS()
		v := p.value(depth + 1)
		m := jsonNode{kind: kindMember, escapedKey: escaped, start: int32(keyStart), end: int32(keyEnd), child: -1, next: -1, val: v}
		if prev := p.findMember(members, byKey, m); prev >= 0 {
			p.t.nodes[prev].val = v // last value wins, first position kept
		} else {
			mi := p.add(m)
			if last < 0 {
				p.t.nodes[idx].child = mi
			} else {
				p.t.nodes[last].next = mi
			}
			last = mi
			members = append(members, mi)
			if len(members) > dedupMapThreshold {
				if byKey == nil {
					byKey = make(map[string]int32, 2*dedupMapThreshold)
					for _, x := range members {
						byKey[p.t.key(x)] = x
					}
				} else {
					byKey[p.t.key(mi)] = mi
				}
			}
		}
		p.skipWS()
		if p.t.src[p.pos] == ',' {
			p.pos++
			p.skipWS()
			continue
		}
		p.pos++ // }
		return
	}
}

// findMember returns the member node with m's key, or -1.
func (p *parser) findMember(members []int32, byKey map[string]int32, m jsonNode) int32 {
	if byKey != nil {
		if x, ok := byKey[p.t.keyOf(m)]; ok {
			return x
		}
		return -1
	}
	for _, x := range members {
		o := p.t.nodes[x]
		if !o.escapedKey && !m.escapedKey {
			if bytes.Equal(p.t.src[o.start:o.end], p.t.src[m.start:m.end]) {
				return x
			}
			continue
		}
		if p.t.keyOf(o) == p.t.keyOf(m) {
			return x
		}
	}
	return -1
}

// skipString moves past the string starting at p.pos.
func (p *parser) skipString() {
	src := p.t.src
	p.pos++
	for p.pos < len(src) {
		switch src[p.pos] {
		case '\\':
			p.pos += 2
		case '"':
			p.pos++
			return
		default:
			p.pos++
		}
	}
}

// skipValue moves past the value at p.pos without building nodes, iteratively.
func (p *parser) skipValue() {
	src := p.t.src
	depth := 0
	for p.pos < len(src) {
		switch src[p.pos] {
		case '"':
			p.skipString()
			if depth == 0 {
				return
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				p.pos++
				return
			}
		}
		p.pos++
	}
}

// key returns the decoded key of member node i.
func (t *jsonTree) key(i int32) string { return t.keyOf(t.nodes[i]) }

func (t *jsonTree) keyOf(m jsonNode) string {
	raw := t.src[m.start:m.end]
	if !m.escapedKey {
		return string(raw)
	}
	var s string
	if err := json.Unmarshal(t.src[m.start-1:m.end+1], &s); err != nil {
		return string(raw)
	}
	return s
}

// member returns the value node of key in object node obj, or -1.
func (t *jsonTree) member(obj int32, key string) int32 {
	if obj < 0 || t.nodes[obj].kind != kindObject {
		return -1
	}
	for c := t.nodes[obj].child; c >= 0; c = t.nodes[c].next {
		m := t.nodes[c]
		if !m.escapedKey {
			if string(t.src[m.start:m.end]) == key {
				return m.val
			}
		} else if t.keyOf(m) == key {
			return m.val
		}
	}
	return -1
}

// raw returns the source text of value node v.
func (t *jsonTree) raw(v int32) json.RawMessage {
	n := t.nodes[v]
	return json.RawMessage(t.src[n.start:n.end])
}

// kind returns the kind of value node v.
func (t *jsonTree) kind(v int32) nodeKind { return t.nodes[v].kind }

// isEmptyContainer reports whether v is an object or array without members or items.
func (t *jsonTree) isEmptyContainer(v int32) bool {
	n := t.nodes[v]
	return (n.kind == kindObject || n.kind == kindArray) && n.child < 0 && !n.deep
}

// str decodes string node v.
func (t *jsonTree) str(v int32) string {
	var s string
	_ = json.Unmarshal(t.raw(v), &s) // the source is valid JSON
	return s
}

func isNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E'
}
