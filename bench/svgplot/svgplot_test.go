package svgplot

import (
	"encoding/xml"
	"math"
	"strings"
	"testing"
)

func TestLineAndBars_AreWellFormedSVGWithEveryValue(t *testing.T) {
	ch := Chart{Title: "t <&>", XLabel: "x", YLabel: "y", X: []float64{1, 2, 4, 8}, LogX: true,
		Series: []Series{{Name: "a", Values: []float64{1, 2, 3, 4}}, {Name: "b", Values: []float64{10, math.NaN(), 30, 40}}},
		XNames: []string{"one", "two", "four", "eight"}, Note: "run of today"}
	for name, svg := range map[string]string{"line": Line(ch), "bars": Bars(ch)} {
		d := xml.NewDecoder(strings.NewReader(svg))
		for {
			if _, err := d.Token(); err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("%s: not well-formed XML: %v", name, err)
				}
				break
			}
		}
		for _, want := range []string{"t &lt;&amp;&gt;", "40<", "run of today", ">eight<"} {
			if !strings.Contains(svg, want) {
				t.Errorf("%s: missing %q", name, want)
			}
		}
	}
}

func TestNum_Formats(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 12345: "12 345", 12.34: "12.3", 1.234: "1.23", 0.01234: "0.0123"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}
