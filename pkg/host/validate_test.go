package host

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateGraphName_Cases_MatchRule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		wantErr error
	}{
		{"simple", "echo", nil},
		{"underscore and hyphen", "a_b-c9", nil},
		{"64 chars", "a" + strings.Repeat("b", 63), nil},
		{"65 chars", "a" + strings.Repeat("b", 64), ErrInvalidName},
		{"empty", "", ErrEmptyName},
		{"digit first", "1echo", ErrInvalidName},
		{"trailing newline", "echo\n", ErrInvalidName},
		{"slash", "a/b", ErrInvalidName},
		{"space", "a b", ErrInvalidName},
		{"non-ascii letter", "éa", ErrInvalidName},
		{"underscore first", "_a", ErrInvalidName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateGraphName(tt.in)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("ValidateGraphName(%q) = %v, want %v", tt.in, err, tt.wantErr)
			}
		})
	}
}

func TestValidateGraphName_Invalid_ContractMessage(t *testing.T) {
	t.Parallel()
	err := ValidateGraphName("bad name")
	want := "Invalid graph name 'bad name'. Must start with a letter, contain only letters, digits, underscores or hyphens, and be 1\u201364 characters."
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	if err := ValidateGraphName(""); err == nil || err.Error() != "Graph name must not be empty" {
		t.Fatalf("empty: got %v", err)
	}
}

func TestValidateThreadID_Cases_MessagesInOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"ok", "t1", ""},
		{"printable ascii", " !~'\"\\", ""},
		{"256 chars", strings.Repeat("a", 256), ""},
		{"empty", "", "Thread ID must not be empty"},
		{"257 chars", strings.Repeat("a", 257), "Thread ID exceeds maximum length of 256 characters"},
		{"256 code points non-ascii", strings.Repeat("é", 256), "Thread ID must contain only printable ASCII characters"},
		{"257 code points non-ascii is length first", strings.Repeat("é", 257), "Thread ID exceeds maximum length of 256 characters"},
		{"129 two-byte chars under 256 code points", strings.Repeat("é", 129), "Thread ID must contain only printable ASCII characters"},
		{"trailing newline", "t1\n", "Thread ID must contain only printable ASCII characters"},
		{"tab", "a\tb", "Thread ID must contain only printable ASCII characters"},
		{"DEL", "a\x7f", "Thread ID must contain only printable ASCII characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateThreadID(tt.in)
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, ErrInvalidThreadID) {
					t.Errorf("error %v does not wrap ErrInvalidThreadID", err)
				}
			}
			if got != tt.want {
				t.Fatalf("ValidateThreadID: got %q, want %q", got, tt.want)
			}
		})
	}
}

// nest wraps inner in n objects {"a": ...}.
func nest(n int, inner string) string {
	return strings.Repeat(`{"a":`, n) + inner + strings.Repeat("}", n)
}

func items(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]"
}

func TestCheckLimits_Boundaries_MatchContract(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc string
		want      error
	}{
		{"31 wrappers around {} pass", nest(31, "{}"), nil},
		{"32 wrappers around {} fail", nest(32, "{}"), errTooDeep},
		{"31 wrappers around scalar pass", nest(31, "1"), nil},
		{"32 wrappers around scalar fail", nest(32, "1"), errTooDeep},
		{"object with 9999 items passes", `{"a":` + items(9999) + `}`, nil},
		{"object with 10000 items fails", `{"a":` + items(10000) + `}`, errTooManyNode},
		{"top-level array of 10000 passes", items(10000), nil},
		{"top-level array of 10001 fails", items(10001), errTooManyNode},
		{"scalar passes", `"x"`, nil},
		{"duplicate key replaces big value", `{"a":` + items(10001) + `,"a":1}`, nil},
		{"duplicate key replaces small value", `{"a":1,"a":` + items(10001) + `}`, errTooManyNode},
		{"escaped duplicate key", `{"a":` + nest(40, "1") + `,"\u0061":1}`, nil},
		{"nodes before depth in document order", `{"x":` + items(10000) + `,"y":` + nest(40, "1") + `}`, errTooManyNode},
		{"depth before nodes in document order", `{"y":` + nest(40, "1") + `,"x":` + items(10000) + `}`, errTooDeep},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tree, err := parseStrict([]byte(tt.doc), DefaultMaxInputDepth+1)
			if err != nil {
				t.Fatalf("parseStrict: %v", err)
			}
			err = checkLimits(tree, tree.root, DefaultMaxInputDepth, DefaultMaxInputNodes)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("checkLimits = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestParseStrict_InvalidBodies_Rejected(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body string }{
		{"empty", ""},
		{"whitespace", "  \n"},
		{"BOM", "\ufeff{}"},
		{"invalid utf8 in string", "{\"a\":\"\xff\"}"},
		{"NaN", `{"a":NaN}`},
		{"Infinity", `{"a":Infinity}`},
		{"-Infinity", `{"a":-Infinity}`},
		{"trailing comma", `{"a":1,}`},
		{"single quotes", `{'a':1}`},
		{"two documents", `{} {}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := parseStrict([]byte(tt.body), 10); !errors.Is(err, errInvalidJSON) {
				t.Fatalf("parseStrict(%q) = %v, want errInvalidJSON", tt.body, err)
			}
		})
	}
}

func TestParseStrict_DuplicateKeys_LastWins(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 40 { // past the map threshold
		b.WriteString(`"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1,`)
	}
	b.WriteString(`"input":{"x":1},"input":{"y":2},"kaa":3}`)
	tree, err := parseStrict([]byte(b.String()), 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(tree.raw(tree.member(tree.root, "input"))); got != `{"y":2}` {
		t.Fatalf("input = %s, want the last value", got)
	}
	if got := string(tree.raw(tree.member(tree.root, "kaa"))); got != "3" {
		t.Fatalf("kaa = %s, want 3", got)
	}
}
