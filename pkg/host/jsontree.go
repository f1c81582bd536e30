package host

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/internal/jsonenc"
)

// errInvalidJSON reports a body that is not strict RFC 8259 JSON in UTF-8.
var errInvalidJSON = apierror.NewKind(apierror.ErrBadRequest, "host: invalid JSON")

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
	first [16]jsonNode // nodes' first backing array: a small body costs one allocation
}

// parseStrict parses a request body. It fails with errInvalidJSON for an empty body, a BOM,
// invalid UTF-8, NaN/Infinity, nesting deeper than 10 000 levels or anything else that is not
// RFC 8259 JSON. Containers nested deeper than maxParseDepth (top level = 1) are validated and
// recorded but not expanded.
func parseStrict(src []byte, maxParseDepth int) (*jsonTree, error) {
	t := &jsonTree{}
	if err := t.parse(src, maxParseDepth); err != nil {
		return nil, err
	}
	return t, nil
}

// parse is parseStrict into t, whose nodes it reuses.
func (t *jsonTree) parse(src []byte, maxParseDepth int) error {
	// Raw bytes are checked here: the decoder allows invalid UTF-8 only so that escaped lone
	// surrogates ("\ud800") pass, as they do in encoding/json.
	if !utf8.Valid(src) {
		return errInvalidJSON
	}
	st := decoderPool.Get().(*pooledDecoder)
	st.buf = *bytes.NewBuffer(src)
	st.dec.Reset(&st.buf, decoderOptions...)
	t.src = src
	if t.nodes == nil {
		t.nodes = t.first[:0]
	}
	t.nodes = t.nodes[:0]
	b := treeBuilder{d: &st.dec, t: t, maxDepth: maxParseDepth}
	root, err := b.value(1)
	if err == nil {
		if _, e := b.d.ReadToken(); e != io.EOF {
			err = errInvalidJSON // a second document or trailing bytes
		}
	}
	st.buf = bytes.Buffer{}
	st.dec.Reset(&st.buf)
	decoderPool.Put(st)
	if err != nil {
		return errInvalidJSON
	}
	t.root = root
	return nil
}

// maxPooledNodes keeps the trees of unusually large bodies out of treePool.
const maxPooledNodes = 256

// treePool holds the trees of parseRunRequestInto, which keeps nothing of a tree but slices of
// its source and strings it decoded.
var treePool = sync.Pool{New: func() any { return new(jsonTree) }}

// putTree returns t to treePool, without its source.
func putTree(t *jsonTree) {
	if cap(t.nodes) > maxPooledNodes {
		return
	}
	t.src = nil
	treePool.Put(t)
}

// pooledDecoder is a jsontext.Decoder over a bytes.Buffer, which it reads in place.
type pooledDecoder struct {
	dec jsontext.Decoder
	buf bytes.Buffer
}

var decoderPool = sync.Pool{New: func() any { return new(pooledDecoder) }}

// decoderOptions: duplicate names are allowed, because the tree keeps Python's dict semantics
// for them; invalid UTF-8 is allowed for escaped lone surrogates only (see parseStrict). The
// nesting limit is jsontext's fixed 10 000 levels, the same as encoding/json's.
var decoderOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// treeBuilder reads one document from its decoder into a jsonTree.
type treeBuilder struct {
	d        *jsontext.Decoder
	t        *jsonTree
	maxDepth int
}

func (b *treeBuilder) add(n jsonNode) int32 {
	b.t.nodes = append(b.t.nodes, n)
	return int32(len(b.t.nodes) - 1)
}

// value reads the next value and returns its node index.
func (b *treeBuilder) value(depth int) (int32, error) {
	d := b.d
	switch k := d.PeekKind(); k {
	case '{', '[':
		kind := kindArray
		if k == '{' {
			kind = kindObject
		}
		if depth > b.maxDepth {
			v, err := d.ReadValue() // validated, not expanded
			if err != nil {
				return -1, err
			}
			end := int32(d.InputOffset())
			return b.add(jsonNode{kind: kind, deep: true, start: end - int32(len(v)), end: end, child: -1, next: -1, val: -1}), nil
		}
		if _, err := d.ReadToken(); err != nil {
			return -1, err
		}
		idx := b.add(jsonNode{kind: kind, start: int32(d.InputOffset()) - 1, child: -1, next: -1, val: -1})
		var err error
		if kind == kindObject {
			err = b.object(idx, depth)
		} else {
			err = b.array(idx, depth)
		}
		if err != nil {
			return -1, err
		}
		if _, err := d.ReadToken(); err != nil {
			return -1, err
		}
		b.t.nodes[idx].end = int32(d.InputOffset())
		return idx, nil
	case 0: // no value: the end of the input or a syntax error
		if _, err := d.ReadToken(); err != nil && err != io.EOF {
			return -1, err
		}
		return -1, errInvalidJSON
	}
	v, err := d.ReadValue()
	if err != nil {
		return -1, err
	}
	end := int32(d.InputOffset())
	kind := kindNumber
	switch v.Kind() {
	case 'n':
		kind = kindNull
	case 't', 'f':
		kind = kindBool
	case '"':
		kind = kindString
	}
	return b.add(jsonNode{kind: kind, start: end - int32(len(v)), end: end, child: -1, next: -1, val: -1}), nil
}

func (b *treeBuilder) array(idx int32, depth int) error {
	last := int32(-1)
	for b.d.PeekKind() != ']' {
		v, err := b.value(depth + 1)
		if err != nil {
			return err
		}
		if last < 0 {
			b.t.nodes[idx].child = v
		} else {
			b.t.nodes[last].next = v
		}
		last = v
	}
	return nil
}

// dedupMapThreshold is the member count above which duplicate keys are found with a map.
const dedupMapThreshold = 16

// object reads the members of object node idx. A repeated key keeps its first position and
// takes the last value.
func (b *treeBuilder) object(idx int32, depth int) error {
	t, d := b.t, b.d
	last := int32(-1)
	var members []int32
	var byKey map[string]int32
	for d.PeekKind() != '}' {
		name, err := d.ReadValue()
		if err != nil {
			return err
		}
		keyEnd := int32(d.InputOffset()) - 1
		keyStart := keyEnd - int32(len(name)) + 2
		escaped := bytes.IndexByte(name, '\\') >= 0
		v, err := b.value(depth + 1)
		if err != nil {
			return err
		}
		m := jsonNode{kind: kindMember, escapedKey: escaped, start: keyStart, end: keyEnd, child: -1, next: -1, val: v}
		if prev := t.findMember(members, byKey, m); prev >= 0 {
			t.nodes[prev].val = v // last value wins, first position kept
			continue
		}
		mi := b.add(m)
		if last < 0 {
			t.nodes[idx].child = mi
		} else {
			t.nodes[last].next = mi
		}
		last = mi
		members = append(members, mi)
		if len(members) > dedupMapThreshold {
			if byKey == nil {
				byKey = make(map[string]int32, 2*dedupMapThreshold)
				for _, x := range members {
					byKey[t.key(x)] = x
				}
			} else {
				byKey[t.key(mi)] = mi
			}
		}
	}
	return nil
}

// findMember returns the member node among members (or byKey, once built) with m's key, or -1.
func (t *jsonTree) findMember(members []int32, byKey map[string]int32, m jsonNode) int32 {
	if byKey != nil {
		if x, ok := byKey[t.keyOf(m)]; ok {
			return x
		}
		return -1
	}
	for _, x := range members {
		o := t.nodes[x]
		if !o.escapedKey && !m.escapedKey {
			if bytes.Equal(t.src[o.start:o.end], t.src[m.start:m.end]) {
				return x
			}
			continue
		}
		if t.keyOf(o) == t.keyOf(m) {
			return x
		}
	}
	return -1
}

// key returns the decoded key of member node i.
func (t *jsonTree) key(i int32) string { return t.keyOf(t.nodes[i]) }

func (t *jsonTree) keyOf(m jsonNode) string {
	raw := t.src[m.start:m.end]
	if !m.escapedKey {
		return string(raw)
	}
	return jsonenc.UnquoteString(t.src[m.start-1 : m.end+1])
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
func (t *jsonTree) str(v int32) string { return jsonenc.UnquoteString(t.raw(v)) }
