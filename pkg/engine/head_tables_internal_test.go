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
	"unsafe"
)

// unstoredHeadFields are the fields of head no property holds: the row's key, ETag and
// Timestamp, and caches.
var unstoredHeadFields = []string{"runID", "etag", "stamp", "stateVal", "branchRows"}

// TestHead_Props_EveryFieldOnce: the tables name every stored property once, and reach every
// stored field of head (its parts' included) through exactly one entry.
func TestHead_Props_EveryFieldOnce(t *testing.T) {
	t.Parallel()
	names := map[string]int{}
	for _, f := range allHeadProps {
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

	reached := map[uintptr][]string{} // a field's offset: the properties that reach it
	for _, f := range allHeadProps {
		reached[f.off] = append(reached[f.off], f.name)
		if f.flags&propSpilled != 0 {
			reached[f.refOff] = append(reached[f.refOff], f.refName)
		}
	}
	var walk func(typ reflect.Type, base uintptr)
	walk = func(typ reflect.Type, base uintptr) {
		for i := range typ.NumField() {
			sf := typ.Field(i)
			if sf.Anonymous {
				walk(sf.Type, base+sf.Offset)
				continue
			}
			by := reached[base+sf.Offset]
			delete(reached, base+sf.Offset)
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
	walk(reflect.TypeFor[head](), 0)
	for _, by := range reached {
		t.Errorf("properties %v reach no field of head", by)
	}
}

// TestHead_Props_CheckedAtInit: an entry whose offset is no field of its type, or that is
// written with no property, fails checkHeadProps (init panics with it).
func TestHead_Props_CheckedAtInit(t *testing.T) {
	t.Parallel()
	if err := checkHeadProps(allHeadProps); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []headProp{
		intProp("X", propStepped, unsafe.Offsetof(head{}.waiting)),
		strProp("X", propStepped, unsafe.Offsetof(head{}.step)),
		boolProp("X", propStepped, unsafe.Offsetof(head{}.children)),
		timeProp("X", propStepped, unsafe.Offsetof(head{}.holdUntil)),
		strProp("X", propStepped, unsafe.Offsetof(head{}.waiting)+1),
		payloadProp("X", propStepped, unsafe.Offsetof(head{}.stateJSON), unsafe.Offsetof(head{}.visits)),
		strProp("X", propStartedIfSet, unsafe.Offsetof(head{}.waiting)).when("Nothing"),
	} {
		if err := checkHeadProps([]headProp{bad}); err == nil {
			t.Errorf("%+v passed the check", bad)
		}
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
	for _, f := range allHeadProps {
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
		for _, f := range allHeadProps {
			if d.value == f.name || d.value == f.refName {
				t.Errorf("%s declares %s = %q, a head property", d.file, name, d.value)
			}
		}
	}
}
