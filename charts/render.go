package charts

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"strconv"
	"time"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Colours. The plot areas' background and the stall's shade are the only pixels of those
// colours, so that the areas can be found on the image itself.
var (
	PlotBackground = color.RGBA{R: 0xfb, G: 0xfb, B: 0xfb, A: 0xff}
	StallShade     = color.RGBA{R: 0xfd, G: 0xe0, B: 0xdc, A: 0xff}
	waitingColor   = color.RGBA{R: 0x5b, G: 0x2a, B: 0x86, A: 0xff} // purple
	groupColor     = color.RGBA{R: 0x1b, G: 0x9e, B: 0xa0, A: 0xff} // teal
	oldestColor    = color.RGBA{R: 0x8c, G: 0x4b, B: 0x1f, A: 0xff} // brown
	commitColor    = color.RGBA{R: 0x33, G: 0x33, B: 0x33, A: 0xff}
	probeOK        = color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	probeFailed    = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
)

// EventColors are the colours of the incident events' lines.
var EventColors = map[EventKind]color.RGBA{
	Opened:       {R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
	Acknowledged: {R: 0xe6, G: 0x9f, B: 0x00, A: 0xff}, // amber
	Fixed:        {R: 0x1f, G: 0x5f, B: 0xd0, A: 0xff}, // blue
	Recovered:    {R: 0x22, G: 0x8b, B: 0x22, A: 0xff}, // green
}

// Image is a drawn chart: the PNG, and where its two panels' plot areas are, in pixels (the
// lower panel shares the upper's x axis).
type Image struct {
	PNG          []byte
	Upper, Lower image.Rectangle
}

// sans and bold are the chart's typefaces (Liberation, embedded in gonum's plot).
var (
	sans = font.Font{Typeface: "Liberation", Variant: "Sans"}
	bold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
)

// dpi makes a point a pixel.
const dpi = 72

// errEmpty is a chart with nothing to draw.
var errEmpty = errors.New("no samples in the chart's span")

// Render draws c as a Width × Height PNG.
func Render(c Chart) (*Image, error) {
	if !c.To.After(c.From) {
		return nil, fmt.Errorf("chart of %s: its span ends (%s) before it begins (%s)", c.Pipeline, c.To, c.From)
	}
	if len(c.Points) == 0 {
		return nil, fmt.Errorf("chart of %s: %w", c.Pipeline, errEmpty)
	}
	loc := c.Location()
	from, to := unix(c.From), unix(c.To)
	ticks := timeTicks(loc)

	upper := newPanel(from, to, ticks)
	upper.Title.Text = fmt.Sprintf("%s: progress (times in %s)", c.Pipeline, c.ZoneName())
	upper.Title.Padding = vg.Points(6)
	upper.Y.Label.Text = "records"
	upper.Y.Tick.Marker = countTicks{}
	upper.X.Tick.Label.Color = color.Transparent // the lower panel carries the times
	upper.X.Tick.Label.Font.Size = vg.Points(1)

	lower := newPanel(from, to, ticks)
	unit := ageUnit(c.Points)
	lower.Y.Label.Text = "oldest record"
	lower.Y.Tick.Marker = ageTicks{unit: unit}

	upper.Add(background{}, stall{c.Stall, from, to})
	lower.Add(background{}, stall{c.Stall, from, to})
	waiting := series(c.Points, func(p Point) (float64, bool) { return float64(p.Waiting), p.Waiting >= 0 })
	group := series(c.Points, func(p Point) (float64, bool) { return float64(p.GroupLag), p.GroupLag >= 0 })
	oldest := series(c.Points, func(p Point) (float64, bool) { return float64(p.Oldest) / unit.Seconds(), p.Oldest >= 0 })
	upper.Y.Min, upper.Y.Max = 0, niceMax(maxOf(waiting, group))
	lower.Y.Min, lower.Y.Max = 0, niceMax(maxOf(oldest))

	if err := addLines(upper, group, draw.LineStyle{Color: groupColor, Width: vg.Points(2.5), Dashes: []vg.Length{vg.Points(7), vg.Points(4)}}, "group lag"); err != nil {
		return nil, err
	}
	if err := addLines(upper, waiting, draw.LineStyle{Color: waitingColor, Width: vg.Points(3)}, "records waiting"); err != nil {
		return nil, err
	}
	if err := addLines(lower, oldest, draw.LineStyle{Color: oldestColor, Width: vg.Points(3)}, "age of the oldest waiting record"); err != nil {
		return nil, err
	}
	upper.Add(commitTicks{c.Commits, from, to})
	lower.Add(probeMarks{c.Probes, from, to})
	upper.Add(eventLines{events: c.Events, from: from, to: to, labels: true, loc: loc})
	lower.Add(eventLines{events: c.Events, from: from, to: to})
	commitSty := draw.LineStyle{Color: commitColor, Width: vg.Points(1)}
	upper.Legend.Add("checkpoint commits (ticks)", legendTick{commitSty})
	if len(c.Probes) > 0 {
		lower.Legend.Add("probe passed", legendGlyph{probeGlyph(true)})
		lower.Legend.Add("probe failed", legendGlyph{probeGlyph(false)})
	}
	for _, p := range []*plot.Plot{upper, lower} {
		p.Legend.Top, p.Legend.Left = true, true
		p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), vg.Points(-4)
		p.Legend.Padding = vg.Points(1)
	}

	img := vgimg.NewWith(vgimg.UseWH(vg.Points(Width), vg.Points(Height)), vgimg.UseDPI(dpi))
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	split := vg.Points(Height * 0.40) // the lower panel's share
	top := draw.Crop(dc, 0, 0, split, 0)
	bottom := draw.Crop(dc, 0, 0, 0, -(dc.Max.Y - split))
	top, bottom = alignX(upper, top, lower, bottom)
	upper.Draw(top)
	lower.Draw(bottom)

	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart of %s: %w", c.Pipeline, err)
	}
	return &Image{PNG: buf.Bytes(), Upper: pixels(upper.DataCanvas(top)), Lower: pixels(lower.DataCanvas(bottom))}, nil
}

// newPanel is a plot over the chart's span with its time ticks and readable type.
func newPanel(from, to float64, ticks plot.Ticker) *plot.Plot {
	p := plot.New()
	p.Title.TextStyle.Font = font.From(bold, vg.Points(19))
	p.Legend.TextStyle.Font = font.From(sans, vg.Points(13))
	p.X.Min, p.X.Max = from, to
	p.X.Tick.Marker = ticks
	p.X.Padding, p.Y.Padding = 0, 0
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Tick.Label.Font = font.From(sans, vg.Points(13))
		a.Label.TextStyle.Font = font.From(bold, vg.Points(13))
		a.Width = vg.Points(1)
		a.Tick.LineStyle.Width = vg.Points(1)
	}
	return p
}

// alignX crops the two panels' canvases so that their plot areas span the same x.
func alignX(a *plot.Plot, ac draw.Canvas, b *plot.Plot, bc draw.Canvas) (draw.Canvas, draw.Canvas) {
	ad, bd := a.DataCanvas(ac), b.DataCanvas(bc)
	left := max(ad.Min.X-ac.Min.X, bd.Min.X-bc.Min.X)
	right := max(ac.Max.X-ad.Max.X, bc.Max.X-bd.Max.X)
	ac = draw.Crop(ac, left-(ad.Min.X-ac.Min.X), -(right - (ac.Max.X - ad.Max.X)), 0, 0)
	bc = draw.Crop(bc, left-(bd.Min.X-bc.Min.X), -(right - (bc.Max.X - bd.Max.X)), 0, 0)
	return ac, bc
}

// pixels is a canvas's rectangle in the image's pixels (y grows downwards there).
func pixels(c draw.Canvas) image.Rectangle {
	return image.Rect(int(math.Round(float64(c.Min.X))), Height-int(math.Round(float64(c.Max.Y))),
		int(math.Round(float64(c.Max.X))), Height-int(math.Round(float64(c.Min.Y))))
}

func unix(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// series turns points into runs of known values: an unknown value ends a run.
func series(points []Point, value func(Point) (float64, bool)) []plotter.XYs {
	var out []plotter.XYs
	var run plotter.XYs
	for _, p := range points {
		v, ok := value(p)
		if !ok {
			if len(run) > 0 {
				out = append(out, run)
			}
			run = nil
			continue
		}
		run = append(run, plotter.XY{X: unix(p.At), Y: v})
	}
	if len(run) > 0 {
		out = append(out, run)
	}
	return out
}

func maxOf(sets ...[]plotter.XYs) float64 {
	m := 0.0
	for _, runs := range sets {
		for _, r := range runs {
			for _, xy := range r {
				m = max(m, xy.Y)
			}
		}
	}
	return m
}

// niceMax is the top of a y axis: a little above the highest value, on a round number.
func niceMax(m float64) float64 {
	if m <= 0 {
		return 1
	}
	m *= 1.12
	step := math.Pow(10, math.Floor(math.Log10(m)))
	for _, f := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if f*step >= m {
			return f * step
		}
	}
	return 10 * step
}

// addLines adds each run as a line; a run of one point is a dot. The first run carries the
// legend entry.
func addLines(p *plot.Plot, runs []plotter.XYs, sty draw.LineStyle, legend string) error {
	for i, r := range runs {
		l, err := plotter.NewLine(r)
		if err != nil {
			return err
		}
		l.LineStyle = sty
		p.Add(l)
		if len(r) == 1 {
			s, err := plotter.NewScatter(r)
			if err != nil {
				return err
			}
			s.GlyphStyle = draw.GlyphStyle{Color: sty.Color, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
			p.Add(s)
		}
		if i == 0 && legend != "" {
			p.Legend.Add(legend, l)
		}
	}
	if len(runs) == 0 && legend != "" {
		l := &plotter.Line{LineStyle: sty}
		p.Legend.Add(legend+" (unknown)", l)
	}
	return nil
}

// background fills the plot area.
type background struct{}

func (background) Plot(c draw.Canvas, _ *plot.Plot) {
	c.SetColor(PlotBackground)
	c.Fill(c.Rectangle.Path())
}

// stall shades the stall's span over the whole height of the plot area.
type stall struct {
	span     *Span
	from, to float64
}

func (s stall) Plot(c draw.Canvas, p *plot.Plot) {
	if s.span == nil {
		return
	}
	x0, x1 := unix(s.span.From), s.to
	if !s.span.To.IsZero() {
		x1 = unix(s.span.To)
	}
	x0, x1 = max(x0, s.from), min(x1, s.to)
	if x1 <= x0 {
		return
	}
	tx, _ := p.Transforms(&c)
	c.FillPolygon(StallShade, []vg.Point{{X: tx(x0), Y: c.Min.Y}, {X: tx(x1), Y: c.Min.Y}, {X: tx(x1), Y: c.Max.Y}, {X: tx(x0), Y: c.Max.Y}})
}

// commitTicks draws each checkpoint commit as a short tick rising from the bottom of the plot
// area.
type commitTicks struct {
	commits  []Commit
	from, to float64
}

func (ct commitTicks) Plot(c draw.Canvas, p *plot.Plot) {
	tx, _ := p.Transforms(&c)
	sty := draw.LineStyle{Color: commitColor, Width: vg.Points(1)}
	for _, cm := range ct.commits {
		x := unix(cm.At)
		if x < ct.from || x > ct.to {
			continue
		}
		c.StrokeLine2(sty, tx(x), c.Min.Y, tx(x), c.Min.Y+vg.Points(7))
	}
}

// probeMarks draws probe results along the bottom of the plot area: a dot for a pass, a cross
// for a failure.
type probeMarks struct {
	probes   []Probe
	from, to float64
}

func (pm probeMarks) Plot(c draw.Canvas, p *plot.Plot) {
	tx, _ := p.Transforms(&c)
	for _, pr := range pm.probes {
		x := unix(pr.At)
		if x < pm.from || x > pm.to {
			continue
		}
		c.DrawGlyph(probeGlyph(pr.OK), vg.Point{X: tx(x), Y: c.Min.Y + vg.Points(7)})
	}
}

func probeGlyph(ok bool) draw.GlyphStyle {
	if ok {
		return draw.GlyphStyle{Color: probeOK, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
	}
	return draw.GlyphStyle{Color: probeFailed, Radius: vg.Points(5), Shape: boldCross{}}
}

// boldCross is draw.CrossGlyph with strokes thick enough to see at a preview's size.
type boldCross struct{}

func (boldCross) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	ls := draw.LineStyle{Color: sty.Color, Width: vg.Points(2.5)}
	r := sty.Radius
	c.StrokeLine2(ls, pt.X-r, pt.Y-r, pt.X+r, pt.Y+r)
	c.StrokeLine2(ls, pt.X-r, pt.Y+r, pt.X+r, pt.Y-r)
}

// legendTick and legendGlyph are the legend's thumbnails of commit ticks and probe marks.
type legendTick struct{ sty draw.LineStyle }

func (l legendTick) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	for _, dx := range []vg.Length{-6, -2, 2, 6} {
		c.StrokeLine2(l.sty, x+dx, c.Min.Y, x+dx, c.Max.Y)
	}
}

type legendGlyph struct{ sty draw.GlyphStyle }

func (l legendGlyph) Thumbnail(c *draw.Canvas) { c.DrawGlyph(l.sty, c.Center()) }

// eventLines draws the incident's events as vertical lines; with labels, each is named at the
// top of the plot area, on the first row where it does not overlap another label.
type eventLines struct {
	events   []Event
	from, to float64
	labels   bool
	loc      *time.Location
}

func (el eventLines) Plot(c draw.Canvas, p *plot.Plot) {
	tx, _ := p.Transforms(&c)
	text := draw.TextStyle{Font: font.From(bold, vg.Points(13)), Handler: plot.DefaultTextHandler,
		XAlign: draw.XLeft, YAlign: draw.YTop}
	var rowEnds []vg.Length
	for _, e := range el.events {
		x := unix(e.At)
		if x < el.from || x > el.to {
			continue
		}
		col := EventColors[e.Kind]
		if col.A == 0 {
			col = commitColor
		}
		X := tx(x)
		c.StrokeLine2(draw.LineStyle{Color: col, Width: vg.Points(2.5)}, X, c.Min.Y, X, c.Max.Y)
		if !el.labels || e.Label == "" {
			continue
		}
		label := e.Label
		w := text.Width(label) + vg.Points(8)
		lx := X + vg.Points(4)
		if lx+w > c.Max.X { // no room to the right: the label goes to the line's left
			lx = X - vg.Points(4) - w
		}
		row := 0
		for row < len(rowEnds) && lx < rowEnds[row] {
			row++
		}
		if row == len(rowEnds) {
			rowEnds = append(rowEnds, 0)
		}
		rowEnds[row] = lx + w
		h := text.Height(label) + vg.Points(3)
		y := c.Max.Y - vg.Points(3) - vg.Length(row)*(h+vg.Points(2))
		c.FillPolygon(color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xd8}, []vg.Point{{X: lx, Y: y}, {X: lx + w - vg.Points(4), Y: y},
			{X: lx + w - vg.Points(4), Y: y - h}, {X: lx, Y: y - h}})
		sty := text
		sty.Color = col
		c.FillText(sty, vg.Point{X: lx + vg.Points(2), Y: y - vg.Points(1)}, label)
	}
}

// countTicks labels a count axis with round numbers (12k, 1.5M).
type countTicks struct{}

func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = count(ticks[i].Value)
		}
	}
	return ticks
}

func count(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', -1, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// ageUnit is the unit of the age axis: seconds, minutes or hours, by the oldest age drawn.
func ageUnit(points []Point) time.Duration {
	var m int64
	for _, p := range points {
		m = max(m, p.Oldest)
	}
	switch {
	case m >= 3*3600:
		return time.Hour
	case m >= 180:
		return time.Minute
	}
	return time.Second
}

// ageTicks labels the age axis in its unit (10m, 2h).
type ageTicks struct{ unit time.Duration }

func (a ageTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	suffix := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}[a.unit]
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', -1, 64) + suffix
		}
	}
	return ticks
}

// timeTicks marks the time axis at round times of the chart's zone: about six labels, with
// unlabelled ticks between them.
func timeTicks(loc *time.Location) plot.Ticker {
	return plot.TickerFunc(func(lo, hi float64) []plot.Tick {
		span := time.Duration((hi - lo) * float64(time.Second))
		steps := []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
			10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour,
			12 * time.Hour, 24 * time.Hour}
		step := steps[len(steps)-1]
		for _, s := range steps {
			if span/s <= 7 {
				step = s
				break
			}
		}
		minor := step / 2
		format := "15:04"
		if step < time.Minute {
			format = "15:04:05"
		}
		start := time.UnixMilli(int64(lo * 1000)).In(loc)
		// Round times of the zone: whole steps since the zone's midnight.
		midnight := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, loc)
		t := midnight.Add(start.Sub(midnight).Truncate(minor))
		var ticks []plot.Tick
		for ; unix(t) <= hi; t = t.Add(minor) {
			if unix(t) < lo {
				continue
			}
			tick := plot.Tick{Value: unix(t)}
			if t.Sub(midnight)%step == 0 {
				tick.Label = t.Format(format)
			}
			ticks = append(ticks, tick)
		}
		return ticks
	})
}
