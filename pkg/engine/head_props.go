package engine

import (
	"fmt"
	"reflect"
	"slices"
	"time"
	"unsafe"
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
// writes that carry it. The field is named by its offset in head (unsafe.Offsetof), not by a
// func: a head passed to a func value escapes to the heap, and a start's head would no longer
// live on its stack. init checks every offset against head's fields.
type headProp struct {
	name    string
	refName string // a spilled pair's Ref property
	typ     propType
	flags   propFlags
	off     uintptr // the field's offset in head; a spilled pair's inline value
	refOff  uintptr // a spilled pair's blob name
	setWith string  // propStartedIfSet: the property whose value decides ("": its own)
}

// strProp declares a string property held at offset off of head.
func strProp(name string, flags propFlags, off uintptr) headProp {
	return headProp{name: name, typ: propString, flags: flags, off: off}
}

// payloadProp declares a spilled pair: the property name with its inline JSON held at
// offset val of head and name+"Ref" with its blob's name at offset ref.
func payloadProp(name string, flags propFlags, val, ref uintptr) headProp {
	return headProp{name: name, refName: name + refSuffix, typ: propString, flags: flags | propSpilled, off: val, refOff: ref}
}

// intProp declares an int64 property held at offset off of head.
func intProp(name string, flags propFlags, off uintptr) headProp {
	return headProp{name: name, typ: propInt, flags: flags, off: off}
}

// boolProp declares a bool property held at offset off of head.
func boolProp(name string, flags propFlags, off uintptr) headProp {
	return headProp{name: name, typ: propBool, flags: flags, off: off}
}

// timeProp declares a time property held at offset off of head.
func timeProp(name string, flags propFlags, off uintptr) headProp {
	return headProp{name: name, typ: propTime, flags: flags, off: off}
}

// when returns f written at start only when the property name is set (propStartedIfSet),
// instead of when f is.
func (f headProp) when(name string) headProp {
	f.setWith = name
	return f
}

// allHeadProps is every head property, the parts' tables in one.
var allHeadProps = slices.Concat(headCoreProps, headWaitProps, headRetryProps, headFanOutProps, headChildProps, headHoldProps)

// fieldAt returns the field of h at offset off, of type T. Its callers pass offsets of
// fields of type T only: init checks the tables' (checkHeadProps).
func fieldAt[T any](h *head, off uintptr) *T { return (*T)(unsafe.Add(unsafe.Pointer(h), off)) }

func init() {
	if err := checkHeadProps(allHeadProps); err != nil {
		panic(err)
	}
}

// checkHeadProps returns an error unless every offset props name is that of a field of head
// of the entry's type, and every setWith names a property: what makes fieldAt safe.
func checkHeadProps(props []headProp) error {
	fields := map[uintptr]reflect.StructField{} // head's fields, its parts' included, by offset
	var walk func(t reflect.Type, base uintptr)
	walk = func(t reflect.Type, base uintptr) {
		for i := range t.NumField() {
			sf := t.Field(i)
			if sf.Anonymous {
				walk(sf.Type, base+sf.Offset)
				continue
			}
			fields[base+sf.Offset] = sf
		}
	}
	walk(reflect.TypeFor[head](), 0)
	check := func(name string, typ propType, off uintptr) error {
		sf, ok := fields[off]
		fits := false
		switch {
		case !ok:
		case typ == propString:
			fits = sf.Type.Kind() == reflect.String
		case typ == propInt:
			fits = sf.Type.Kind() == reflect.Int64
		case typ == propBool:
			fits = sf.Type.Kind() == reflect.Bool
		case typ == propTime:
			fits = sf.Type == reflect.TypeFor[time.Time]()
		}
		if !fits {
			return fmt.Errorf("engine: head property %s: no field of its type at offset %d of head", name, off)
		}
		return nil
	}
	for _, f := range props {
		if err := check(f.name, f.typ, f.off); err != nil {
			return err
		}
		if f.flags&propSpilled != 0 {
			if err := check(f.refName, propString, f.refOff); err != nil {
				return err
			}
		}
		if _, ok := propFields[f.setWith]; f.setWith != "" && !ok {
			return fmt.Errorf("engine: head property %s: written with %s, no property", f.name, f.setWith)
		}
	}
	return nil
}
