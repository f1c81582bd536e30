package inspector

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"sync"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// FuncInspector is the function name of the page.
const FuncInspector = "fg_inspector"

// Route is the page's route template, under the route prefix (GET /api/inspector).
const Route = "inspector"

//go:embed web
var web embed.FS

// scripts are the page's JavaScript files, in the order they are inlined: each may use what
// the files before it define. dagre.min.js is the graph-layout library graph.js uses, vendored
// (its license is web/dagre.LICENSE).
var scripts = []string{"dagre.min.js", "api.js", "graph.js", "history.js", "live.js", "runs.js", "run.js", "app.js"}

// Page is the assembled document and its Content-Security-Policy.
type Page struct {
	// HTML is the whole page: index.html with style.css and the scripts inlined.
	HTML []byte
	// CSP is the Content-Security-Policy it is served with: only its own inline script and
	// style run, and it connects only to its own origin.
	CSP string
}

var (
	pageOnce sync.Once
	page     Page
	pageErr  error
)

// Build assembles the page from the embedded files (once; later calls return the same page).
func Build() (Page, error) {
	pageOnce.Do(func() { page, pageErr = build(web) })
	return page, pageErr
}

func build(files fs.FS) (Page, error) {
	read := func(name string) (string, error) {
		b, err := fs.ReadFile(files, "web/"+name)
		if err != nil {
			return "", fmt.Errorf("read inspector file %s: %w", name, err)
		}
		return string(b), nil
	}
	html, err := read("index.html")
	if err != nil {
		return Page{}, err
	}
	css, err := read("style.css")
	if err != nil {
		return Page{}, err
	}
	var js strings.Builder
	js.WriteString("\"use strict\";\n")
	for _, name := range scripts {
		src, err := read(name)
		if err != nil {
			return Page{}, err
		}
		fmt.Fprintf(&js, "// %s\n%s\n", name, src)
	}
	for _, marker := range []string{"<!--STYLE-->", "<!--SCRIPT-->"} {
		if strings.Count(html, marker) != 1 {
			return Page{}, fmt.Errorf("assemble inspector page: index.html must hold %s once", marker)
		}
	}
	script := js.String()
	if strings.Contains(script, "</script") || strings.Contains(css, "</style") {
		return Page{}, fmt.Errorf("assemble inspector page: a closing tag inside the inlined code")
	}
	html = strings.Replace(html, "<!--STYLE-->", "<style>"+css+"</style>", 1)
	html = strings.Replace(html, "<!--SCRIPT-->", "<script>"+script+"</script>", 1)
	csp := "default-src 'none'; script-src " + hashSource(script) + "; style-src " + hashSource(css) +
		"; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	return Page{HTML: []byte(html), CSP: csp}, nil
}

// hashSource is the CSP source that allows exactly one inline element with this content.
func hashSource(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// Handler serves the page: 200 text/html, never cached, never sent as a Referer (the key may
// be in the URL), 500 if the embedded files cannot be assembled (a build defect).
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := Build()
		if err != nil {
			http.Error(w, "inspector page unavailable", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", p.CSP)
		h.Set("Cache-Control", "no-store")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = bytes.NewReader(p.HTML).WriteTo(w)
		}
	})
}

// Function returns the page's HTTP function (GET /api/inspector) at auth level auth, the level
// of the runs API it reads (runsapi.Mount gives it the run routes' level).
func Function(auth funchost.AuthLevel) funchost.HTTPFunction {
	return funchost.HTTPFunction{
		Name: FuncInspector, Methods: []string{http.MethodGet}, Route: Route, AuthLevel: auth, Handler: Handler(),
		Doc: funchost.RouteDoc{Summary: "Run inspector (HTML page)", Tags: []string{"runs"},
			Description: "A browser page over the runs API: runs, a run's graph, path and history, graph versions; send an event, cancel, purge. Open it with ?code=<function key> or type the key in the page."},
	}
}
