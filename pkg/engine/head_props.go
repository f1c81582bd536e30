package engine

import (
	"fmt"
	"slices"
	"time"
)

// The head's properties are declared once, each in the table of the part of the head that
// holds it (head.go's core, head_wait.go, head_retry.go, head_fanout.go, head_child.go,
// head_hold.go), with the types and flags below. Reading a head and writing it read the
// tables (head_codec.go).

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
	// zero or, for an entry made with when, the value of the property when names is not.
	propStartedIfSet
	// propSpilled: a payload a commit may spill to a blob (commit.go). It is a pair of
	// properties: the name holds inline JSON or "", the name plus "Ref" the blob's name; both
	// are written whenever either would be.
	propSpilled

	// propStep is what most properties are: every step rewrites it, and a step's merge
	// writes it when it changed.
	propStep = propStepped | propCompared
)

// headProp declares one head property: its name, its type, where head holds it and the
// writes that carry it. The field is reached through an accessor: a package-level func of
// the table entry, of the property's type, returning the field of the head it is passed
// (func(h *head) *string { return &h.waiting }), so the compiler checks the field's type.
// The cost is that a head passed to a func value escapes to the heap: a start's head no
// longer lives on its stack (one allocation per start).
type headProp struct {
	propField // the property's type and field; a spilled pair's inline value
	name      string
	refName   string              // a spilled pair's Ref property
	ref       func(*head) *string // a spilled pair's blob name
	flags     propFlags
	setWith   string // propStartedIfSet: the property whose value decides ("": its own)
}

// propField is where head holds one stored property (a spilled pair is two): its type and
// the accessor of its field, the one of that type (the others are nil).
type propField struct {
	typ propType
	str func(*head) *string    // propString
	i64 func(*head) *int64     // propInt
	b   func(*head) *bool      // propBool
	t   func(*head) *time.Time // propTime
}

// strProp declares a string property held in the field str returns.
func strProp(name string, flags propFlags, str func(*head) *string) headProp {
	return headProp{name: name, propField: propField{typ: propString, str: str}, flags: flags}
}

// payloadProp declares a spilled pair: the property name with its inline JSON held in the
// field val returns and name+"Ref" with its blob's name in the field ref returns.
func payloadProp(name string, flags propFlags, val, ref func(*head) *string) headProp {
	return headProp{
		name: name, refName: name + refSuffix, propField: propField{typ: propString, str: val}, ref: ref,
		flags: flags | propSpilled,
	}
}

// intProp declares an int64 property held in the field i64 returns.
func intProp(name string, flags propFlags, i64 func(*head) *int64) headProp {
	return headProp{name: name, propField: propField{typ: propInt, i64: i64}, flags: flags}
}

// boolProp declares a bool property held in the field b returns.
func boolProp(name string, flags propFlags, b func(*head) *bool) headProp {
	return headProp{name: name, propField: propField{typ: propBool, b: b}, flags: flags}
}

// timeProp declares a time property held in the field t returns.
func timeProp(name string, flags propFlags, t func(*head) *time.Time) headProp {
	return headProp{name: name, propField: propField{typ: propTime, t: t}, flags: flags}
}

// when returns f written at start only when the property name is set (propStartedIfSet),
// instead of when f is.
func (f headProp) when(name string) headProp {
	f.setWith = name
	return f
}

// allHeadProps is every head property, the parts' tables in one.
var allHeadProps = slices.Concat(headCoreProps, headWaitProps, headRetryProps, headFanOutProps, headChildProps, headHoldProps, headKeysProps, headContinueProps, headRewindProps)

func init() {
	if err := checkHeadProps(allHeadProps); err != nil {
		panic(err)
	}
}

// checkHeadProps returns an error unless every entry of props has the accessor of its type
// (and a spilled pair its blob name's), and every setWith names a property. The accessors'
// types the compiler checks; that each stored field of head is reached by one entry, the
// tests (head_tables_internal_test.go).
func checkHeadProps(props []headProp) error {
	for _, f := range props {
		if !f.reachable() || f.flags&propSpilled != 0 && (f.typ != propString || f.ref == nil) {
			return fmt.Errorf("engine: head property %s: no accessor of its type", f.name)
		}
		if _, ok := propFields[f.setWith]; f.setWith != "" && !ok {
			return fmt.Errorf("engine: head property %s: written with %s, no property", f.name, f.setWith)
		}
	}
	return nil
}

// reachable reports whether f has the accessor of its type.
func (f propField) reachable() bool {
	switch f.typ {
	case propString:
		return f.str != nil
	case propInt:
		return f.i64 != nil
	case propBool:
		return f.b != nil
	case propTime:
		return f.t != nil
	}
	return false
}
