package funchost

import (
	"fmt"
	"slices"
	"strings"
)

// checkConflict refuses two HTTP functions the host could not serve as intended.
//
// The host tries routes in function-name order and the first match wins; a method mismatch
// falls through. So two routes with intersecting methods that can match one URL are only safe
// when the more specific one (literal where the other has a parameter) sorts first. Identical
// routes are always a conflict: the host fails to load the later one.
func checkConflict(a, b *httpEntry) error {
	if !methodsIntersect(a.methods, b.methods) {
		return nil
	}
	if strings.EqualFold(a.template.text, b.template.text) {
		return fmt.Errorf("%w: the route %q of function %q conflicts with the route defined by function %q",
			ErrRouteConflict, a.fn.Route, a.fn.Name, b.fn.Name)
	}
	if !overlap(a.template.segments, b.template.segments) {
		return nil
	}
	first, second := a, b
	if compareNames(a.fn.Name, b.fn.Name) > 0 {
		first, second = b, a
	}
	if moreSpecific(first.template.segments, second.template.segments) {
		return nil
	}
	if moreSpecific(second.template.segments, first.template.segments) {
		return fmt.Errorf("%w: route %q (function %q) overlaps the more specific route %q (function %q), "+
			"but the host tries %q first; name the more specific function so it sorts first",
			ErrRouteConflict, first.fn.Route, first.fn.Name, second.fn.Route, second.fn.Name, first.fn.Name)
	}
	return fmt.Errorf("%w: routes %q (function %q) and %q (function %q) can match the same URL",
		ErrRouteConflict, first.fn.Route, first.fn.Name, second.fn.Route, second.fn.Name)
}

func methodsIntersect(a, b []string) bool {
	if len(a) == 0 || len(b) == 0 {
		return true
	}
	for _, m := range a {
		if slices.Contains(b, m) {
			return true
		}
	}
	return false
}

func canEnd(segs []routeSegment) bool {
	for _, s := range segs {
		if !s.canBeAbsent() {
			return false
		}
	}
	return true
}

// overlap reports whether some path could match both segment lists. It is conservative:
// two parameters always overlap, and a literal overlaps a parameter unless the parameter's
// constraints reject it.
func overlap(a, b []routeSegment) bool {
	if canEnd(a) && canEnd(b) {
		return true
	}
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	if a[0].catchAll || b[0].catchAll {
		return true
	}
	if !segmentsOverlap(a[0], b[0]) {
		return false
	}
	return overlap(a[1:], b[1:])
}

func segmentsOverlap(x, y routeSegment) bool {
	switch {
	case !x.isParam() && !y.isParam():
		return strings.EqualFold(x.literal, y.literal)
	case !x.isParam():
		return y.accepts(x.literal)
	case !y.isParam():
		return x.accepts(y.literal)
	}
	return true
}

// moreSpecific reports whether a is at least as specific as b everywhere they align (a literal
// where b has a parameter, or the same kind), and strictly more specific somewhere.
func moreSpecific(a, b []routeSegment) bool {
	strict := false
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ap, bp := a[i].isParam(), b[i].isParam()
		switch {
		case ap && !bp:
			return false
		case !ap && bp:
			strict = true
		case ap && bp:
			if a[i].catchAll && !b[i].catchAll {
				return false
			}
			if !a[i].catchAll && b[i].catchAll {
				strict = true
			}
		}
	}
	endsInCatchAll := func(s []routeSegment) bool { return len(s) > 0 && s[len(s)-1].catchAll }
	switch {
	case len(a) > len(b) && !endsInCatchAll(b):
		// a's extra segments can only overlap b if they are optional: a is then more general.
		return false
	case len(a) < len(b) && !endsInCatchAll(a):
		// b ends in an optional tail that a does not have: a is more specific.
		strict = true
	}
	return strict
}
