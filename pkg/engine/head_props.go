package engine

import (
	"slices"
	"time"
)

// The head's properties are declared once, each in the table of the part of the head that
// holds it (head.go's core, head_wait.go, head_retry.go, head_fanout.go, head_child.go,
// head_hold.go). Reading a head (set), a step's rewrite (mutableProps) and merge
// (changedProps), a start's write (allProps) and absorb all read the tables.

// propType is the type a head property is stored as.
type propType uint8

const (
	propString propType = iota // a string
	propInt                    // an int64 (an int32 reads as one)
	propBool                   // a bool
	propTime                   // a time.Time
)

// propFlags say which writes of the head carry a property.
type propFlags uint8

const (
	// propStepped: every step rewrites it (mutableProps), and so does a start.
	propStepped propFlags = 1 << iota
	// propZeroed: every step writes its zero value, whatever the head holds (mutableProps),
	// and so does a start.
	propZeroed
	// propCompared: a step's merge writes it when it differs from the stored head's
	// (changedProps).
	propCompared
	// propStamped: a step's merge always writes it (changedProps): it stamps the write.
	propStamped
	// propStarted: a start writes it (allProps).
	propStarted
	// propStartedIfSet: a start writes it only when it is set (allProps): its value is not
	// zero or, for an entry made with when, when's test holds.
	propStartedIfSet
	// propSpilled: a payload a commit may spill to a blob (commit.go). It is a pair of
	// properties: the name holds inline JSON or "", the name plus "Ref" the blob's name; both
	// are written whenever either would be.
	propSpilled
)

// headProp declares one head property: its name, its type, its field of head and the writes
// that carry it. Exactly one of str, num, bit and at is set, after typ.
type headProp struct {
	name    string
	refName string // a spilled pair's Ref property
	typ     propType
	flags   propFlags
	str     func(*head) *string // propString; a spilled pair's inline value
	ref     func(*head) *string // a spilled pair's blob name
	num     func(*head) *int64
	bit     func(*head) *bool
	at      func(*head) *time.Time
	isSet   func(*head) bool // propStartedIfSet: whether a start writes it (nil: not zero)
}

// strProp declares a string property.
func strProp(name string, flags propFlags, field func(*head) *string) headProp {
	return headProp{name: name, typ: propString, flags: flags, str: field}
}

// payloadProp declares a spilled pair: the property name with its inline JSON and name+"Ref"
// with its blob's name.
func payloadProp(name string, flags propFlags, val, ref func(*head) *string) headProp {
	return headProp{name: name, refName: name + refSuffix, typ: propString, flags: flags | propSpilled, str: val, ref: ref}
}

// intProp declares an int64 property.
func intProp(name string, flags propFlags, field func(*head) *int64) headProp {
	return headProp{name: name, typ: propInt, flags: flags, num: field}
}

// boolProp declares a bool property.
func boolProp(name string, flags propFlags, field func(*head) *bool) headProp {
	return headProp{name: name, typ: propBool, flags: flags, bit: field}
}

// timeProp declares a time property.
func timeProp(name string, flags propFlags, field func(*head) *time.Time) headProp {
	return headProp{name: name, typ: propTime, flags: flags, at: field}
}

// when returns f written at start only when set reports true (propStartedIfSet).
func (f headProp) when(set func(*head) bool) headProp {
	f.isSet = set
	return f
}

// headProps is every head property, the parts' tables in one.
var headProps = slices.Concat(headCoreProps, headWaitProps, headRetryProps, headFanOutProps, headChildProps, headHoldProps)

// The tables' entries by the writes that carry them.
var (
	// steppedProps are the properties mutableProps writes.
	steppedProps = propsWith(propStepped | propZeroed)
	// mergedProps are the properties changedProps writes or compares.
	mergedProps = propsWith(propStamped | propCompared)
	// startedProps are the properties allProps writes beyond mutableProps'.
	startedProps = propsWith(propStarted | propStartedIfSet)
	// spilledProps are the spilled pairs (absorb).
	spilledProps = propsWith(propSpilled)
	// startedCount is the most properties allProps writes.
	startedCount = countNames(propsWith(propStepped | propZeroed | propStarted | propStartedIfSet))
)

// propsWith returns the properties with any of flags.
func propsWith(flags propFlags) []headProp {
	var ps []headProp
	for _, f := range headProps {
		if f.flags&flags != 0 {
			ps = append(ps, f)
		}
	}
	return ps
}

// countNames returns how many stored properties ps are (a spilled pair is two).
func countNames(ps []headProp) int {
	n := len(ps)
	for _, f := range ps {
		if f.flags&propSpilled != 0 {
			n++
		}
	}
	return n
}

// propField is one stored property: its entry, and whether it is a spilled pair's Ref.
type propField struct {
	prop *headProp
	ref  bool
}

// propFields finds a stored property's entry by its name (set).
var propFields = func() map[string]propField {
	m := make(map[string]propField, countNames(headProps))
	for i := range headProps {
		f := &headProps[i]
		m[f.name] = propField{prop: f}
		if f.flags&propSpilled != 0 {
			m[f.refName] = propField{prop: f, ref: true}
		}
	}
	return m
}()

// set sets the field of h that the head property name holds; a value of another type than
// the property's, or an unknown property, is ignored (the field keeps its zero value).
func (h *head) set(name string, v any) {
	pf, ok := propFields[name]
	if !ok {
		return
	}
	switch f := pf.prop; f.typ {
	case propString:
		field := f.str
		if pf.ref {
			field = f.ref
		}
		*field(h), _ = v.(string)
	case propInt:
		*f.num(h) = asInt64(v)
	case propBool:
		*f.bit(h), _ = v.(bool)
	case propTime:
		*f.at(h), _ = v.(time.Time)
	}
}

// asInt64 returns an int64 or int32 value as int64, else 0.
func asInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	}
	return 0
}

// put sets in p the property's value in h (both of a spilled pair).
func (f *headProp) put(h *head, p map[string]any) {
	switch f.typ {
	case propString:
		p[f.name] = *f.str(h)
		if f.ref != nil {
			p[f.refName] = *f.ref(h)
		}
	case propInt:
		p[f.name] = *f.num(h)
	case propBool:
		p[f.name] = *f.bit(h)
	case propTime:
		p[f.name] = *f.at(h)
	}
}

// putZero sets in p the property's zero value (both of a spilled pair).
func (f *headProp) putZero(p map[string]any) {
	switch f.typ {
	case propString:
		p[f.name] = ""
		if f.ref != nil {
			p[f.refName] = ""
		}
	case propInt:
		p[f.name] = int64(0)
	case propBool:
		p[f.name] = false
	case propTime:
		p[f.name] = time.Time{}
	}
}

// putChanged sets in p the property's value in h where it differs from base's (each of a
// spilled pair on its own).
func (f *headProp) putChanged(h, base *head, p map[string]any) {
	switch f.typ {
	case propString:
		if v := *f.str(h); v != *f.str(base) {
			p[f.name] = v
		}
		if f.ref != nil {
			if v := *f.ref(h); v != *f.ref(base) {
				p[f.refName] = v
			}
		}
	case propInt:
		if v := *f.num(h); v != *f.num(base) {
			p[f.name] = v
		}
	case propBool:
		if v := *f.bit(h); v != *f.bit(base) {
			p[f.name] = v
		}
	case propTime:
		if v := *f.at(h); !v.Equal(*f.at(base)) {
			p[f.name] = v
		}
	}
}

// setIn reports whether the property is set in h: isSet's answer, else whether its value
// (either of a spilled pair) is not zero.
func (f *headProp) setIn(h *head) bool {
	if f.isSet != nil {
		return f.isSet(h)
	}
	switch f.typ {
	case propString:
		return *f.str(h) != "" || f.ref != nil && *f.ref(h) != ""
	case propInt:
		return *f.num(h) != 0
	case propBool:
		return *f.bit(h)
	case propTime:
		return !f.at(h).IsZero()
	}
	return false
}

// mutableProps sets in p the properties a step rewrites (merged into the head row).
func (h *head) mutableProps(p map[string]any) {
	for i := range steppedProps {
		f := &steppedProps[i]
		if f.flags&propZeroed != 0 {
			f.putZero(p)
		} else {
			f.put(h, p)
		}
	}
}

// changedProps returns the properties of h that differ from base, the stored head it was
// built from (merged into the head row, conditioned on base's ETag, so what the row holds
// afterwards equals mutableProps of h). WriteID and Updated are always written: they stamp
// the write (the ambiguity rule, commit.go).
func (h *head) changedProps(base *head) map[string]any {
	p := make(map[string]any, 8) // a step changes about 8; a map of 8 is one group
	for i := range mergedProps {
		f := &mergedProps[i]
		if f.flags&propStamped != 0 {
			f.put(h, p)
		} else {
			f.putChanged(h, base, p)
		}
	}
	return p
}

// allProps returns every head property (insert or replace at start).
func (h *head) allProps() map[string]any {
	p := make(map[string]any, startedCount) // sized once: every property a start may write
	h.mutableProps(p)
	for i := range startedProps {
		f := &startedProps[i]
		if f.flags&propStarted != 0 || f.setIn(h) {
			f.put(h, p)
		}
	}
	return p
}

// absorb copies back what spilling changed in the written properties.
// Properties the write leaves out (unchanged) are left as they are.
func (h *head) absorb(props map[string]any) {
	for i := range spilledProps {
		f := &spilledProps[i]
		if v, ok := props[f.name].(string); ok {
			*f.str(h) = v
		}
		if v, ok := props[f.refName].(string); ok {
			*f.ref(h) = v
		}
	}
}
