package inspector

import (
	"io/fs"
	"strings"
	"testing"
)

// maxPageBytes bounds the assembled page: the vendored layout library is most of it.
const maxPageBytes = 256 << 10

// TestBuild_BundlesTheLayoutLibraryWithItsLicense: the page carries dagre inline, before the
// drawing code that uses it, with its license note, and nothing it would fetch (no source map,
// no script or style from elsewhere); it stays under maxPageBytes.
func TestBuild_BundlesTheLayoutLibraryWithItsLicense(t *testing.T) {
	p, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	page := string(p.HTML)
	lib := strings.Index(page, "var dagre=")
	use := strings.Index(page, "function layoutGraph")
	if lib < 0 || use < 0 || lib > use {
		t.Fatalf("dagre at %d, layoutGraph at %d: the library must come first", lib, use)
	}
	for _, want := range []string{"@dagrejs/dagre 3.1.3", "MIT License", "Copyright (c) 2012-2014 Chris Pettitt", "dagre.LICENSE"} {
		if !strings.Contains(page[:lib], want) {
			t.Errorf("the library's header lacks %q", want)
		}
	}
	for _, banned := range []string{"sourceMappingURL", "<script src", "<link "} {
		if strings.Contains(page, banned) {
			t.Errorf("the page holds %q: it would fetch something", banned)
		}
	}
	if len(p.HTML) > maxPageBytes {
		t.Errorf("the page is %d bytes, more than %d", len(p.HTML), maxPageBytes)
	}
}

// TestWeb_LayoutLibraryLicenseShipsBesideIt: the license's full text is embedded next to the
// vendored file.
func TestWeb_LayoutLibraryLicenseShipsBesideIt(t *testing.T) {
	b, err := fs.ReadFile(web, "web/dagre.LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Permission is hereby granted, free of charge") {
		t.Errorf("web/dagre.LICENSE is not the MIT license text:\n%.200s", b)
	}
}
