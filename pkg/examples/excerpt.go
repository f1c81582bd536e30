package examples

import "unicode/utf8"

// maxQuoteBytes bounds what a graph quotes of a text it was given (a question, a URL, a
// reviewer's name) in the text it derives from it (a summary, a draft, a result): a graph
// that quoted its input whole in each of its outputs would turn one large start into many
// copies of it.
const maxQuoteBytes = 120

// ellipsis ends an excerpt that was cut.
const ellipsis = "…"

// excerpt returns s if it fits in n bytes, else its longest prefix that ends between two
// runes and fits with ellipsis appended, so that the result is at most n bytes (or ellipsis
// alone when n is smaller than it).
func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n-len(ellipsis), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
