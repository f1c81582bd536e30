package myapp

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	// mdLink matches a Markdown link or image target: ](target) or ](target "title").
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	// underShared matches a path under shared/.
	underShared = regexp.MustCompile(`(^|[^A-Za-z0-9_-])shared/`)
	// inlineCode matches a code span.
	inlineCode = regexp.MustCompile("`[^`]*`")
)

// TestDocs_LinksStayInTheRepository keeps README.md, CHANGELOG.md and docs/*.md usable from the
// published repository: no link or mention points under shared/ (the product's private notes,
// not part of the repository), and every relative link names a file of the repository, and a
// heading of it when it has an #anchor.
func TestDocs_LinksStayInTheRepository(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	files := []string{"README.md", "CHANGELOG.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("docs/ has no Markdown file")
	}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		files = append(files, rel)
	}
	for _, f := range files {
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			if underShared.MatchString(line) {
				t.Errorf("%s:%d points under shared/, which is not in the repository: %s", f, i+1, line)
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(withoutFences(string(text)), "``"), -1) {
			checkLink(t, root, f, m[1])
		}
	}
}

// checkLink fails the test when target, a link in file, leaves the repository or names a
// missing file or heading. Absolute URLs are left alone.
func checkLink(t *testing.T, root, file, target string) {
	t.Helper()
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return
	}
	path, anchor, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
		if rel, err := filepath.Rel(".", dest); err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("%s: link %q leaves the repository", file, target)
			return
		}
	}
	info, err := os.Stat(filepath.Join(root, dest))
	if err != nil {
		t.Errorf("%s: link %q names %s, which does not exist", file, target, dest)
		return
	}
	if anchor == "" || info.IsDir() || !strings.HasSuffix(dest, ".md") {
		return
	}
	text, err := os.ReadFile(filepath.Join(root, dest))
	if err != nil {
		t.Fatal(err)
	}
	if !headingAnchors(withoutFences(string(text)))[anchor] {
		t.Errorf("%s: link %q names heading #%s, which %s does not have", file, target, anchor, dest)
	}
}

// headingAnchors returns the anchors GitHub gives the headings of a Markdown text: lower
// case, punctuation other than - and _ dropped, spaces as hyphens, repeats numbered -1, -2.
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		a := b.String()
		for n, cand := 0, a; ; n++ {
			if !out[cand] {
				out[cand] = true
				break
			}
			cand = a + "-" + strconv.Itoa(n+1)
		}
	}
	return out
}

// withoutFences blanks fenced code blocks, where neither links nor headings are.
func withoutFences(text string) string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			lines[i] = ""
		} else if fenced {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}
