package funchost

import (
	"net/url"
	"reflect"
	"testing"
)

// FuzzParseTriggerURL checks that the trigger's URL reader agrees with url.Parse: the same
// URL, or the same error.
func FuzzParseTriggerURL(f *testing.F) {
	for _, seed := range []string{
		"http://localhost:7071/api/graphs/echo/invoke", "https://app.azurewebsites.net/api/x",
		"http://localhost:/api", "http://:80/api", "http://h:8a/", "http://h/a?b=c", "http://h/%41",
		"HTTP://h/a", "http://h", "http:///a", "http://h:1:2/a", "http://[::1]:80/a", "http://h/a b",
		"http://h/a;b", "http://h/a#f", "http://u@h/a", "http://h./.././", "ftp://h/a", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var u url.URL
		got, err := parseTriggerURL(raw, &u)
		want, wantErr := url.Parse(raw)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("parseTriggerURL(%q): %v, url.Parse: %v", raw, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(*got, *want) {
			t.Fatalf("parseTriggerURL(%q) = %#v, url.Parse %#v", raw, *got, *want)
		}
	})
}

func TestParseTriggerURL_PlainURLIsReadInPlace(t *testing.T) {
	t.Parallel()
	var u url.URL
	got, err := parseTriggerURL("http://localhost:7071/api/graphs/echo/invoke", &u)
	if err != nil || got != &u || u.Path != "/api/graphs/echo/invoke" || u.Host != "localhost:7071" {
		t.Fatalf("got %#v, %v; want the plain URL read into u", got, err)
	}
}
