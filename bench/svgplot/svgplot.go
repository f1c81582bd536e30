// Package svgplot writes small SVG charts — line charts and grouped bar charts — with the
// standard library only, for the benchmark figures of docs/benchmarks.md (`make bench-plots`).
//
// Not for: interactive or general-purpose plotting; axes start at zero and use linear scales,
// or a log-2 x axis for concurrency-like series.
package svgplot

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Series is one named line (or one bar per group) of a chart.
type Series struct {
	Name   string
	Values []float64 // one per X (line) or per group (bars); NaN: no value
}

// Chart is a chart's data and labels.
type Chart struct {
	Title  string
	XLabel string
	YLabel string
	// X are the x positions of a line chart (ignored by Bars); XNames labels them, or names the
	// groups of a bar chart.
	X      []float64
	XNames []string
	// LogX draws a line chart's x axis on a log-2 scale.
	LogX   bool
	Series []Series
	// Note is a line of small text under the chart (which run the figures come from).
	Note string
}

const (
	width, height         = 720, 400
	left, right, top, bot = 80, 190, 50, 70
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"}

type canvas struct{ b strings.Builder }

func (c *canvas) f(format string, a ...any) { fmt.Fprintf(&c.b, format, a...) }

func (c *canvas) text(x, y float64, anchor, size, s string) {
	c.f(`<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%s">%s</text>`+"\n", x, y, anchor, size, html.EscapeString(s))
}

func (ch Chart) frame(ymax float64) (*canvas, func(float64) float64) {
	c := &canvas{}
	c.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">`+"\n", width, height, width, height)
	c.f(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	c.text(width/2, 28, "middle", "16", ch.Title)
	y := func(v float64) float64 { return height - bot - v/ymax*(height-top-bot) }
	for i := 0; i <= 5; i++ {
		v := ymax * float64(i) / 5
		c.f(`<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, width-right, y(v), y(v))
		c.text(left-6, y(v)+4, "end", "11", num(v))
	}
	c.f(`<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="black"/>`+"\n", left, width-right, height-bot, height-bot)
	c.f(`<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="black"/>`+"\n", left, left, top, height-bot)
	c.text(float64(left+width-right)/2, height-bot+40, "middle", "12", ch.XLabel)
	c.f(`<text x="18" y="%d" text-anchor="middle" font-size="12" transform="rotate(-90 18 %d)">%s</text>`+"\n",
		(top+height-bot)/2, (top+height-bot)/2, html.EscapeString(ch.YLabel))
	if ch.Note != "" {
		c.text(left, height-8, "start", "10", ch.Note)
	}
	for i, s := range ch.Series {
		yy := float64(top + 10 + 20*i)
		c.f(`<rect x="%d" y="%.1f" width="14" height="10" fill="%s"/>`+"\n", width-right+14, yy-9, palette[i%len(palette)])
		c.text(float64(width-right+34), yy, "start", "12", s.Name)
	}
	return c, y
}

// Line returns ch as a line chart with a marker at every value.
func Line(ch Chart) string {
	c, y := ch.frame(niceMax(ch.Series))
	xs := make([]float64, len(ch.X))
	for i, v := range ch.X {
		if ch.LogX {
			v = math.Log2(v)
		}
		xs[i] = v
	}
	lo, hi := 0.0, 1.0
	if len(xs) > 0 {
		lo, hi = xs[0], xs[len(xs)-1]
		if hi == lo {
			hi = lo + 1
		}
	}
	x := func(i int) float64 { return left + 20 + (xs[i]-lo)/(hi-lo)*float64(width-right-left-40) }
	for i := range xs {
		name := num(ch.X[i])
		if i < len(ch.XNames) {
			name = ch.XNames[i]
		}
		c.text(x(i), height-bot+18, "middle", "11", name)
	}
	for si, s := range ch.Series {
		color := palette[si%len(palette)]
		var pts []string
		for i, v := range s.Values {
			if i >= len(xs) || math.IsNaN(v) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
			c.f(`<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s: %s</title></circle>`+"\n", x(i), y(v), color, html.EscapeString(s.Name), num(v))
		}
		c.f(`<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color, strings.Join(pts, " "))
	}
	c.f("</svg>\n")
	return c.b.String()
}

// Bars returns ch as a grouped bar chart: one group per XNames entry, one bar per series,
// each labelled with its value.
func Bars(ch Chart) string {
	c, y := ch.frame(niceMax(ch.Series))
	groups := len(ch.XNames)
	gw := float64(width-right-left) / float64(max(1, groups))
	bw := gw * 0.8 / float64(max(1, len(ch.Series)))
	for g, name := range ch.XNames {
		c.text(left+gw*(float64(g)+0.5), height-bot+18, "middle", "11", name)
		for si, s := range ch.Series {
			if g >= len(s.Values) || math.IsNaN(s.Values[g]) {
				continue
			}
			v := s.Values[g]
			x0 := left + gw*float64(g) + gw*0.1 + bw*float64(si)
			c.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`+"\n",
				x0, y(v), bw-2, y(0)-y(v), palette[si%len(palette)], html.EscapeString(s.Name), num(v))
			c.text(x0+bw/2, y(v)-4, "middle", "10", num(v))
		}
	}
	c.f("</svg>\n")
	return c.b.String()
}

// niceMax returns a round upper bound of the y axis above every value.
func niceMax(ss []Series) float64 {
	m := 0.0
	for _, s := range ss {
		for _, v := range s.Values {
			if !math.IsNaN(v) && v > m {
				m = v
			}
		}
	}
	if m <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(m)))
	for _, f := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if f*p >= m*1.05 {
			return f * p
		}
	}
	return 10 * p
}

// num formats a value compactly: 12 345, 1.23, 0.012.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		s := fmt.Sprintf("%.0f", v)
		var out []byte
		for i := range len(s) {
			if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
				out = append(out, ' ')
			}
			out = append(out, s[i])
		}
		return string(out)
	case a >= 10:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0")
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
