package connstr

import (
	"strings"
	"testing"
)

func TestDevelopmentStorage(t *testing.T) {
	t.Parallel()
	got := developmentStorage("")
	for _, want := range []string{"AccountName=devstoreaccount1;", "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
		"QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;", "TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;"} {
		if !strings.Contains(got, want) {
			t.Errorf("DevelopmentStorage(\"\") = %q, want it to contain %q", got, want)
		}
	}
	if got := developmentStorage("http://ipv4.fiddler"); !strings.Contains(got, "BlobEndpoint=http://ipv4.fiddler:10000/devstoreaccount1;") {
		t.Errorf("DevelopmentStorage(proxy) = %q", got)
	}
}
