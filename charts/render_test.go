package charts

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"testing"
	"time"
)

// TestRenderSize: the PNG decodes with image/png at the promised size.
func TestRenderSize(t *testing.T) {
	out, err := Render(sampleChart())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(out.PNG))
	if err != nil {
		t.Fatalf("the chart is no PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != Width || b.Dy() != Height {
		t.Errorf("the chart is %d×%d, want %d×%d", b.Dx(), b.Dy(), Width, Height)
	}
}

// TestRenderPlacesEvents: on the rendered image, the plot areas are where Render says (found
// by their background's pixels), the stall's shade begins at the x its start's time gives,
// and each event's line stands at the x of its time, in its colour, in both panels.
func TestRenderPlacesEvents(t *testing.T) {
	c := sampleChart()
	out, err := Render(c)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(out.PNG))
	if err != nil {
		t.Fatal(err)
	}
	upper, lower := plotAreas(t, img)
	for _, p := range []struct {
		name        string
		found, told image.Rectangle
	}{{"upper", upper, out.Upper}, {"lower", lower, out.Lower}} {
		// Lines along the bottom (zero) and the labels at the top hide some rows: the rows
		// found lie within the area told, the columns are the same.
		if !near(p.found.Min.X, p.told.Min.X, 1) || !near(p.found.Max.X, p.told.Max.X, 1) ||
			p.found.Min.Y < p.told.Min.Y-1 || p.found.Max.Y > p.told.Max.Y+1 || p.found.Dy() < p.told.Dy()*3/4 {
			t.Errorf("the %s plot area's pixels span %v; Render says %v", p.name, p.found, p.told)
		}
	}
	if upper.Min.X != lower.Min.X || upper.Max.X != lower.Max.X {
		t.Errorf("the panels' time axes differ: %v and %v", upper, lower)
	}
	found := upper // the time axis as the pixels show it
	x := func(at time.Time) int {
		return found.Min.X + int(float64(found.Dx())*float64(at.Sub(c.From))/float64(c.To.Sub(c.From))+0.5)
	}
	upper, lower = out.Upper, out.Lower // every row of the areas, for the lines

	// The stall: the first shaded column of a row through the middle of the lower panel.
	row := (lower.Min.Y + lower.Max.Y) / 2
	shadeAt := -1
	for px := lower.Min.X; px < lower.Max.X; px++ {
		if sameColor(img.At(px, row), StallShade, 0) {
			shadeAt = px
			break
		}
	}
	if want := x(c.Stall.From); !near(shadeAt, want, 2) {
		t.Errorf("the stall's shade begins at x=%d; its start %s gives x=%d", shadeAt, c.Stall.From.Format("15:04"), want)
	}

	for _, e := range c.Events {
		want := x(e.At)
		col := EventColors[e.Kind]
		for _, area := range []image.Rectangle{upper, lower} {
			best, bestN := -1, 0
			for px := want - 6; px <= want+6; px++ {
				n := 0
				for py := area.Min.Y; py < area.Max.Y; py++ {
					if sameColor(img.At(px, py), col, 40) {
						n++
					}
				}
				if n > bestN {
					best, bestN = px, n
				}
			}
			if bestN < area.Dy()/2 || !near(best, want, 1) {
				t.Errorf("%s (%s): the %s line stands at x=%d over %d of %d rows; its time gives x=%d",
					e.Label, e.At.Format("15:04"), e.Kind, best, bestN, area.Dy(), want)
			}
		}
	}
}

// plotAreas finds the two plot areas on the image: the bands of rows where long runs of
// pixels have the areas' background or the stall's shade, and the columns those runs span
// (text and lines elsewhere may have those colours too, but not for 20 pixels in a row).
func plotAreas(t *testing.T, img image.Image) (upper, lower image.Rectangle) {
	t.Helper()
	b := img.Bounds()
	isArea := func(px, py int) bool {
		c := img.At(px, py)
		return sameColor(c, PlotBackground, 0) || sameColor(c, StallShade, 0)
	}
	const long = 20
	var bands []image.Rectangle
	in := false
	for py := b.Min.Y; py < b.Max.Y; py++ {
		n, lo, hi, run := 0, b.Max.X, b.Min.X, 0
		for px := b.Min.X; px < b.Max.X; px++ {
			if !isArea(px, py) {
				run = 0
				continue
			}
			if run++; run == long {
				lo = min(lo, px-long+1)
			}
			if run >= long {
				n, hi = n+1, max(hi, px+1)
			}
		}
		switch wide := n > b.Dx()/3; {
		case wide && !in:
			bands = append(bands, image.Rect(lo, py, hi, py+1))
			in = true
		case wide:
			r := &bands[len(bands)-1]
			r.Min.X, r.Max.X, r.Max.Y = min(r.Min.X, lo), max(r.Max.X, hi), py+1
		default:
			in = false
		}
	}
	if len(bands) != 2 {
		t.Fatalf("found %d plot areas on the image, want 2: %v", len(bands), bands)
	}
	return bands[0], bands[1]
}

func near(a, b, tol int) bool { return a-b <= tol && b-a <= tol }

// sameColor compares colours channel by channel within tol (of 255).
func sameColor(c color.Color, want color.RGBA, tol int) bool {
	r, g, b, _ := c.RGBA()
	d := func(v uint32, w uint8) bool { x := int(v>>8) - int(w); return x <= tol && -x <= tol }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

// TestRenderRefusesNothing: a chart without samples, or whose span is empty, is an error, not
// a blank picture.
func TestRenderRefusesNothing(t *testing.T) {
	c := sampleChart()
	c.Points = nil
	if _, err := Render(c); !errors.Is(err, errEmpty) {
		t.Errorf("no samples: %v, want %v", err, errEmpty)
	}
	c = sampleChart()
	c.To = c.From
	if _, err := Render(c); err == nil {
		t.Error("an empty span drew a chart")
	}
}
