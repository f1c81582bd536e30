package funchost

// This file exports the few host rules that a host emulator (package funchosttest) needs and that
// it must not re-implement: name ordering, route prefix stripping and key resolution.

// KeyLevel is what a presented key is worth to the host.
type KeyLevel string

// Key levels, named as the host's auth-level claim values.
const (
	// KeyLevelNone is an unknown or missing key.
	KeyLevelNone KeyLevel = ""
	// KeyLevelFunction is a host function key or one of the function's own keys.
	KeyLevelFunction KeyLevel = "Function"
	// KeyLevelSystem is a host system key.
	KeyLevelSystem KeyLevel = "System"
	// KeyLevelAdmin is the master key.
	KeyLevelAdmin KeyLevel = "Admin"
)

// Resolve resolves a presented key for function as the host does: master → Admin, system keys
// → System, host function keys and the function's own keys → Function, anything else → None.
// It also returns the key's name, as the host puts it in the keyid claim ("master" for the
// master key; "" for no key).
func (k Keys) Resolve(function, key string) (KeyLevel, string) {
	lvl, name := k.level(function, key)
	if lvl == levelNone {
		return KeyLevelNone, ""
	}
	return lvl.public(), name
}

// public is the host's name of a level.
func (l keyLevel) public() KeyLevel {
	switch l {
	case levelAdmin:
		return KeyLevelAdmin
	case levelSystem:
		return KeyLevelSystem
	case levelFunction:
		return KeyLevelFunction
	}
	return KeyLevelNone
}

// CompareFunctionNames orders function names as the host does (ordinal, case-insensitive); the
// host tries HTTP routes in this order and the first match wins.
func CompareFunctionNames(x, y string) int { return compareNames(x, y) }

// StripRoutePrefix removes the route prefix (case-insensitive, whole segments) from a request
// path and reports whether the path was under it. An empty prefix matches every path.
func StripRoutePrefix(path, prefix string) (string, bool) { return stripPrefix(path, prefix) }

// MethodsIntersect reports whether two functions' method sets (upper-case; empty means all)
// share a method; the host only compares the routes of such functions.
func MethodsIntersect(a, b []string) bool { return methodsIntersect(a, b) }
