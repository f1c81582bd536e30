package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// unstoredHeadFields are the fields of head no property holds: the row's key, ETag and
// Timestamp, and caches.
var unstoredHeadFields = []string{"runID", "etag", "stamp", "stateVal", "branchRows"}

// TestHead_Props_EveryFieldOnce: the tables name every stored property once, and reach every
// stored field of head (its parts' included) through exactly one entry.
func TestHead_Props_EveryFieldOnce(t *testing.T) {
	t.Parallel()
	names := map[string]int{}
	for _, f := range headProps {
		names[f.name]++
		if f.flags&propSpilled != 0 {
			names[f.refName]++
		}
	}
	for n, c := range names {
		if c != 1 {
			t.Errorf("property %s is declared %d times", n, c)
		}
	}
	if len(propFields) != len(names) {
		t.Errorf("set knows %d properties, the tables declare %d", len(propFields), len(names))
	}

	h := &head{}
	reached := map[uintptr][]string{} // a field's address: the properties that reach it
	addr := func(v any) uintptr { return reflect.ValueOf(v).Pointer() }
	for _, f := range headProps {
		var ptrs []uintptr
		switch f.typ {
		case propString:
			ptrs = append(ptrs, addr(f.str(h)))
			if f.ref != nil {
				ptrs = append(ptrs, addr(f.ref(h)))
			}
		case propInt:
			ptrs = append(ptrs, addr(f.num(h)))
		case propBool:
			ptrs = append(ptrs, addr(f.bit(h)))
		case propTime:
			ptrs = append(ptrs, addr(f.at(h)))
		}
		if (f.ref != nil) != (f.flags&propSpilled != 0) || len(ptrs) == 0 {
			t.Errorf("property %s: bad entry (type %d, flags %b)", f.name, f.typ, f.flags)
		}
		for _, p := range ptrs {
			reached[p] = append(reached[p], f.name)
		}
	}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			sf, fv := v.Type().Field(i), v.Field(i)
			if sf.Anonymous {
				walk(fv)
				continue
			}
			by := reached[fv.UnsafeAddr()]
			delete(reached, fv.UnsafeAddr())
			switch {
			case slices.Contains(unstoredHeadFields, sf.Name):
				if len(by) != 0 {
					t.Errorf("field %s is not stored, yet properties %v reach it", sf.Name, by)
				}
			case len(by) != 1:
				t.Errorf("field %s is reached by properties %v, want one", sf.Name, by)
			}
		}
	}
	walk(reflect.ValueOf(h).Elem())
	for _, by := range reached {
		t.Errorf("properties %v reach no field of head", by)
	}
}

// propConst matches the name of a property constant.
var propConst = regexp.MustCompile(`^p[A-Z]`)

// TestHead_Props_DeclaredOnce: every head property constant is declared in a head*.go file
// and named by exactly one table entry, in the same file; no other file of the package
// declares a constant of a head property's name (the history row's Node and Step are the
// row's own).
func TestHead_Props_DeclaredOnce(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	type decl struct{ file, value string }
	headConsts := map[string]decl{}  // in head*.go files
	otherConsts := map[string]decl{} // in the package's other files
	entries := map[string][]string{} // a constant: the files of the entries that name it
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		isHead := strings.HasPrefix(path, "head")
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if !propConst.MatchString(id.Name) || i >= len(n.Values) {
						continue
					}
					lit, ok := n.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					if isHead {
						headConsts[id.Name] = decl{path, v}
					} else {
						otherConsts[id.Name] = decl{path, v}
					}
				}
			case *ast.CallExpr:
				fn, ok := n.Fun.(*ast.Ident)
				if !ok || len(n.Args) == 0 {
					break
				}
				switch fn.Name {
				case "strProp", "intProp", "boolProp", "timeProp", "payloadProp":
					if id, ok := n.Args[0].(*ast.Ident); ok {
						entries[id.Name] = append(entries[id.Name], path)
					} else {
						t.Errorf("%s: an entry names its property other than by a constant", fset.Position(n.Pos()))
					}
				}
			}
			return true
		})
	}
	for name, d := range headConsts {
		switch in := entries[name]; {
		case len(in) != 1:
			t.Errorf("%s (%s) is named by %d table entries, want 1", name, d.file, len(in))
		case in[0] != d.file:
			t.Errorf("%s is declared in %s and its entry is in %s", name, d.file, in[0])
		}
	}
	values := map[string]bool{}
	for _, f := range headProps {
		values[f.name] = true
		if f.flags&propSpilled != 0 {
			values[f.refName] = true
		}
	}
	for name := range entries {
		d, ok := headConsts[name]
		if !ok {
			t.Errorf("table entry %s names no constant of a head*.go file", name)
			continue
		}
		delete(values, d.value)
	}
	for v := range values {
		if !strings.HasSuffix(v, refSuffix) {
			t.Errorf("property %q has no constant in a head*.go file", v)
		}
	}
	for name, d := range otherConsts {
		if name == "pHistNode" || name == "pHistStep" {
			continue
		}
		for _, f := range headProps {
			if d.value == f.name || d.value == f.refName {
				t.Errorf("%s declares %s = %q, a head property", d.file, name, d.value)
			}
		}
	}
}
