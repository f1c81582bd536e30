package engine

import "time"

// Reading a head (set, for decodeHead and a RowReader), a step's rewrite (mutableProps) and
// merge (changedProps), a start's write (allProps) and absorb, all from the tables of the
// head's properties (head_props.go).

// The tables' entries by the writes that carry them.
var (
	// steppedProps are the properties mutableProps writes.
	steppedProps = propsWith(propStepped | propZeroed)
	// stampedProps are the properties changedProps always writes.
	stampedProps = propsWith(propStamped)
	// comparedStrs, comparedInts, comparedBools and comparedTimes are the fields of the
	// properties changedProps compares (each of a spilled pair on its own), by their type.
	comparedStrs  = comparedFields(propString)
	comparedInts  = comparedFields(propInt)
	comparedBools = comparedFields(propBool)
	comparedTimes = comparedFields(propTime)
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
	for _, f := range allHeadProps {
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

// namedField is a stored property's name and its field.
type namedField struct {
	name string
	propField
}

// comparedFields returns the fields of type typ of the properties with propCompared (a
// spilled pair's both).
func comparedFields(typ propType) []namedField {
	var fs []namedField
	for _, f := range propsWith(propCompared) {
		if f.typ == typ {
			fs = append(fs, namedField{f.name, f.propField})
		}
		if typ == propString && f.flags&propSpilled != 0 {
			fs = append(fs, namedField{f.refName, f.refField()})
		}
	}
	return fs
}

// refField is the field of a spilled pair's blob name.
func (f *headProp) refField() propField { return propField{typ: propString, str: f.ref} }

// propFields finds a stored property's field by its name (set).
var propFields = func() map[string]propField {
	m := make(map[string]propField, countNames(allHeadProps))
	for _, f := range allHeadProps {
		m[f.name] = f.propField
		if f.flags&propSpilled != 0 {
			m[f.refName] = f.refField()
		}
	}
	return m
}()

// set sets the field of h that the head property name holds; a value of another type than
// the property's, or an unknown property, is ignored (the field keeps its zero value).
func (h *head) set(name string, v any) {
	f, ok := propFields[name]
	if !ok {
		return
	}
	switch f.typ {
	case propString:
		*f.str(h), _ = v.(string)
	case propInt:
		*f.i64(h) = asInt64(v)
	case propBool:
		*f.b(h), _ = v.(bool)
	case propTime:
		*f.t(h), _ = v.(time.Time)
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

// isSet reports whether the field is not zero in h.
func (f propField) isSet(h *head) bool {
	switch f.typ {
	case propString:
		return *f.str(h) != ""
	case propInt:
		return *f.i64(h) != 0
	case propBool:
		return *f.b(h)
	case propTime:
		return !f.t(h).IsZero()
	}
	return false
}

// put sets in p the property's value in h (both of a spilled pair).
func (f *headProp) put(h *head, p map[string]any) {
	switch f.typ {
	case propString:
		p[f.name] = *f.str(h)
		if f.flags&propSpilled != 0 {
			p[f.refName] = *f.ref(h)
		}
	case propInt:
		p[f.name] = *f.i64(h)
	case propBool:
		p[f.name] = *f.b(h)
	case propTime:
		p[f.name] = *f.t(h)
	}
}

// putZero sets in p the property's zero value (both of a spilled pair).
func (f *headProp) putZero(p map[string]any) {
	switch f.typ {
	case propString:
		p[f.name] = ""
		if f.flags&propSpilled != 0 {
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

// startedIn reports whether a start writes the property of h: always for propStarted;
// for propStartedIfSet, when its value (or setWith's) is not zero.
func (f *headProp) startedIn(h *head) bool {
	switch {
	case f.flags&propStarted != 0:
		return true
	case f.setWith != "":
		return propFields[f.setWith].isSet(h)
	case f.flags&propSpilled != 0:
		return *f.str(h) != "" || *f.ref(h) != ""
	}
	return f.isSet(h)
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
	for i := range stampedProps {
		stampedProps[i].put(h, p)
	}
	// One loop per type: this runs on every step.
	for _, f := range comparedStrs {
		if v := *f.str(h); v != *f.str(base) {
			p[f.name] = v
		}
	}
	for _, f := range comparedInts {
		if v := *f.i64(h); v != *f.i64(base) {
			p[f.name] = v
		}
	}
	for _, f := range comparedBools {
		if v := *f.b(h); v != *f.b(base) {
			p[f.name] = v
		}
	}
	for _, f := range comparedTimes {
		if v := *f.t(h); !v.Equal(*f.t(base)) {
			p[f.name] = v
		}
	}
	return p
}

// allProps returns every head property (insert or replace at start).
func (h *head) allProps() map[string]any {
	p := make(map[string]any, startedCount) // sized once: every property a start may write
	h.mutableProps(p)
	for i := range startedProps {
		if f := &startedProps[i]; f.startedIn(h) {
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
