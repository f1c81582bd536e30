package memory

import (
	"cmp"
	"slices"
	"strings"
)

// props are a stored row's properties: a slice sorted by name. It holds a row in a fraction
// of the memory of a map[string]any (no groups, no spare slots), which is what a store
// holding many waiting runs (a head, its history, its index rows) is made of. Rows are
// replaced, never changed in place: a merge builds a new slice.
type props []prop

type prop struct {
	name string
	val  any
}

// newProps copies m (byte slices included), so the store never shares the caller's memory.
func newProps(m map[string]any) props {
	ps := make(props, 0, len(m))
	for k, v := range m {
		ps = append(ps, prop{name: k, val: cloneValue(v)})
	}
	slices.SortFunc(ps, byName)
	return ps
}

func byName(a, b prop) int { return strings.Compare(a.name, b.name) }

// get returns the value of the property name.
func (ps props) get(name string) (any, bool) {
	i, found := slices.BinarySearchFunc(ps, name, func(p prop, n string) int { return cmp.Compare(p.name, n) })
	if !found {
		return nil, false
	}
	return ps[i].val, true
}

// toMap returns the properties as a new map (byte slices copied).
func (ps props) toMap() map[string]any {
	m := make(map[string]any, len(ps))
	for _, p := range ps {
		m[p.name] = cloneValue(p.val)
	}
	return m
}

// merge returns ps with the properties of m set (added or replaced), as a new slice.
func (ps props) merge(m map[string]any) props {
	add := newProps(m)
	out := make(props, 0, len(ps)+len(add))
	i, j := 0, 0
	for i < len(ps) && j < len(add) {
		switch c := strings.Compare(ps[i].name, add[j].name); {
		case c < 0:
			out = append(out, ps[i])
			i++
		case c > 0:
			out = append(out, add[j])
			j++
		default:
			out = append(out, add[j])
			i, j = i+1, j+1
		}
	}
	out = append(append(out, ps[i:]...), add[j:]...)
	return slices.Clip(out)
}
