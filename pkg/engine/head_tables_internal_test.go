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

	// A field's address in h: the properties whose accessors return it.
	h := new(head)
	reached := map[uintptr][]string{}
	reach := func(name string, ptr any) {
		a := reflect.ValueOf(ptr).Pointer()
		reached[a] = append(reached[a], name)
	}
	for _, f := range allHeadProps {
		switch f.typ {
		case propString:
			reach(f.name, f.str(h))
		case propInt:
			reach(f.name, f.i64(h))
		case propBool:
			reach(f.name, f.b(h))
		case propTime:
			reach(f.name, f.t(h))
		}
		if f.flags&propSpilled != 0 {
			reach(f.refName, f.ref(h))
		}
	}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if sf.Anonymous {
				walk(v.Field(i))
				continue
			}
			a := v.Field(i).Addr().Pointer()
			by := reached[a]
			delete(reached, a)
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
		t.Errorf("properties %v reach no field of the head they are passed", by)
	}
}

// TestHead_Props_CheckedAtInit: an entry without the accessor of its type (a headProp
// written as a literal), or written with no property, fails checkHeadProps (init panics
// with it).
func TestHead_Props_CheckedAtInit(t *testing.T) {
	t.Parallel()
	if err := checkHeadProps(allHeadProps); err != nil {
		t.Fatal(err)
	}
	waiting := func(h *head) *string { return &h.waiting }
	for _, bad := range []headProp{
		{name: "X", flags: propStepped, propField: propField{typ: propInt, str: waiting}},
		{name: "X", flags: propStepped, propField: propField{typ: propTime}},
		{name: "X", flags: propStepped, propField: propField{typ: propString + 9, str: waiting}},
		{name: "X", refName: "XRef", flags: propStepped | propSpilled, propField: propField{typ: propString, str: waiting}},
		strProp("X", propStartedIfSet, waiting).when("Nothing"),
	} {
		if err := checkHeadProps([]headProp{bad}); err == nil {
			t.Errorf("%s %+v passed the check", bad.name, bad.propField)
		}
	}
}

// propConst matches the name of a property constant.
var propConst = regexp.MustCompile(`^p[A-Z]`)

// TestHead_Props_DeclaredOnce: every head property constant is declared in a head*.go file
// and named by exactly one table entry, in the same file; every stored field of head (its
// parts' included) is returned by exactly one entry's accessor (func(h *head) *T { return
// &h.field }), in the file that declares the field; no other file of the package declares
// a constant of a head property's name (the history row's Node and Step are the row's own).
func TestHead_Props_DeclaredOnce(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	type decl struct{ file, value string }
	headConsts := map[string]decl{}         // in head*.go files
	otherConsts := map[string]decl{}        // in the package's other files
	entries := map[string][]string{}        // a constant: the files of the entries that name it
	structs := map[string]*ast.StructType{} // the struct types of head*.go files
	structFile := map[string]string{}       // their files
	accessed := map[string][]string{}       // a field: the files of the entries whose accessors return it
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
			case *ast.TypeSpec:
				if st, ok := n.Type.(*ast.StructType); ok && isHead {
					structs[n.Name.Name], structFile[n.Name.Name] = st, path
				}
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
					for _, arg := range n.Args[2:] {
						if field, ok := accessorField(arg); ok {
							accessed[field] = append(accessed[field], path)
						} else {
							t.Errorf("%s: an entry's accessor is not func(h *head) *T { return &h.field }", fset.Position(arg.Pos()))
						}
					}
				}
			}
			return true
		})
	}
	fieldFile := map[string]string{} // the stored fields of head and its parts: their files
	var fields func(typ string)
	fields = func(typ string) {
		st, ok := structs[typ]
		if !ok {
			t.Fatalf("no struct type %s in a head*.go file", typ)
		}
		for _, fl := range st.Fields.List {
			if len(fl.Names) == 0 { // an embedded part
				if id, ok := fl.Type.(*ast.Ident); ok {
					fields(id.Name)
				}
				continue
			}
			for _, id := range fl.Names {
				if !slices.Contains(unstoredHeadFields, id.Name) {
					fieldFile[id.Name] = structFile[typ]
				}
			}
		}
	}
	fields("head")
	for field, file := range fieldFile {
		switch in := accessed[field]; {
		case len(in) != 1:
			t.Errorf("field %s (%s) is returned by %d entries' accessors, want 1", field, file, len(in))
		case in[0] != file:
			t.Errorf("field %s is declared in %s and its entry is in %s", field, file, in[0])
		}
	}
	for field := range accessed {
		if _, ok := fieldFile[field]; !ok {
			t.Errorf("an entry's accessor returns %s, no stored field of head", field)
		}
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

// accessorField returns the field an entry's accessor returns, when e is
// func(h *head) *T { return &h.field } (or a conversion of &h.field, as status's).
func accessorField(e ast.Expr) (string, bool) {
	fn, ok := e.(*ast.FuncLit)
	if !ok || len(fn.Type.Params.List) != 1 || len(fn.Type.Params.List[0].Names) != 1 || len(fn.Body.List) != 1 {
		return "", false
	}
	h := fn.Type.Params.List[0].Names[0].Name
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return "", false
	}
	r := ret.Results[0]
	if conv, ok := r.(*ast.CallExpr); ok && len(conv.Args) == 1 {
		r = conv.Args[0]
	}
	addr, ok := r.(*ast.UnaryExpr)
	if !ok || addr.Op != token.AND {
		return "", false
	}
	sel, ok := addr.X.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	if id, ok := sel.X.(*ast.Ident); !ok || id.Name != h {
		return "", false
	}
	return sel.Sel.Name, true
}
