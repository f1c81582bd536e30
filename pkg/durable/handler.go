package durable

import (
	"reflect"
	"runtime"
)

// funcName returns fn's Go package path and name as the runtime reports it, e.g.
// "github.com/acme/app/graphs.extract" (closures get ".func1" suffixes, method values "-fm"),
// or "" for nil. Default handler names derive from the node name instead (names.go), so that
// a graph's hash does not depend on its Go functions.
func funcName(fn any) string {
	pc := funcPointer(fn)
	if pc == 0 {
		return ""
	}
	if f := runtime.FuncForPC(pc); f != nil {
		return f.Name()
	}
	return ""
}

// funcPointer returns the code pointer of a func value, 0 for nil or non-funcs. Closures of the
// same literal share one code pointer; the contract compares function identity this way.
func funcPointer(fn any) uintptr {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return 0
	}
	return v.Pointer()
}
