package pyjson

import "testing"

func TestRepr_Strings_MatchPython(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"orphan", `'orphan'`},
		{"t1", `'t1'`},
		{"it's", `"it's"`},
		{`a"b`, `'a"b'`},
		{`both'"`, `'both\'"'`},
		{`a\b`, `'a\\b'`},
		{"a\nb", `'a\nb'`},
		{"tab\there", `'tab\there'`},
		{"\x01", `'\x01'`},
		{"é", `'é'`},
		{"\u00a0", `'\xa0'`},
		{"\u200b", `'\u200b'`},
		{"\U000e0001", `'\U000e0001'`},
	}
	for _, tt := range tests {
		if got := Repr(tt.in); got != tt.want {
			t.Errorf("Repr(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got, want := ReprList([]string{"orphan", "z"}), `['orphan', 'z']`; got != want {
		t.Errorf("ReprList = %s, want %s", got, want)
	}
}
